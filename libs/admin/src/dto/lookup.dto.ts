import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { LOOKUP_KEY_MAX_LENGTH } from '#broker/gateway';

/** No control character anywhere (a key goes into logs and the audit, an id into the page). */
const PRINTABLE = /^\P{Cc}*$/u;

/** The path of one lookup's answer: which lookup, and the key it is asked for. */
export class LookupParams {
  @ApiProperty({ example: 'device', description: 'A lookup id from GET /admin/v1/lookups' })
  @IsString()
  @Length(1, 64)
  @Matches(PRINTABLE, { message: 'id must not contain control characters' })
  id!: string;

  @ApiProperty({ example: 'device-17', maxLength: LOOKUP_KEY_MAX_LENGTH, description: 'What it finds by' })
  @IsString()
  @Length(1, LOOKUP_KEY_MAX_LENGTH)
  @Matches(PRINTABLE, { message: 'key must not contain control characters' })
  key!: string;
}

/** The path of an action on what a lookup found. */
export class LookupActionParams extends LookupParams {
  @ApiProperty({ example: 'kick', description: "An action id among the found view's actions" })
  @IsString()
  @Length(1, 64)
  @Matches(PRINTABLE, { message: 'action must not contain control characters' })
  action!: string;
}

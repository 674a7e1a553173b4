import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, Length, ValidateIf } from 'class-validator';
import { PageLimitQuery } from '#broker/admin';
import { type IdTagStatus } from '../store/ocpp.types.js';

const STATUSES: readonly IdTagStatus[] = ['Accepted', 'Blocked', 'Expired', 'Invalid'];

export class CreateIdTagDto {
  @ApiProperty({ example: 'RFID-0001', description: 'OCPP IdToken: up to 20 characters' })
  @IsString()
  @Length(1, 20)
  idTag!: string;

  @ApiPropertyOptional({ enum: STATUSES, default: 'Accepted' })
  @IsOptional()
  @IsIn(STATUSES)
  status?: IdTagStatus;

  @ApiPropertyOptional({ nullable: true, description: 'Group id tag' })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Length(1, 20)
  parentIdTag?: string | null;

  @ApiPropertyOptional({ nullable: true, example: '2027-01-01T00:00:00Z' })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsISO8601({ strict: true })
  expiryDate?: string | null;
}

export class UpdateIdTagDto {
  @ApiPropertyOptional({ enum: STATUSES })
  @IsOptional()
  @IsIn(STATUSES)
  status?: IdTagStatus;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Length(1, 20)
  parentIdTag?: string | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsISO8601({ strict: true })
  expiryDate?: string | null;
}

export class ListIdTagsQuery extends PageLimitQuery {
  @ApiPropertyOptional({ description: 'The last id tag of the previous page' })
  @IsOptional()
  @IsString()
  after?: string;
}

/** Expiry dates are kept as ISO-8601 UTC, so that text order is time order in the store. */
export function normalizeExpiry(value: string | null | undefined): string | null | undefined {
  return value === undefined || value === null ? value : new Date(value).toISOString();
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { LOOKUP_KEY_MAX_LENGTH } from '#broker/gateway';

/** No control character anywhere (a key goes into logs, the audit and the page). */
const PRINTABLE = /^\P{Cc}*$/u;

/** How long a trace runs when not told, and at most (it stops itself on every node). */
export const DEFAULT_TRACE_SEC = 300;
export const MAX_TRACE_SEC = 1800;

/** POST /admin/v1/traces: what to follow, and for how long. */
export class StartTraceDto {
  @ApiProperty({ example: 'mqtt-client', description: 'A kind GET /admin/v1/traces lists' })
  @IsString()
  @Length(1, 64)
  @Matches(PRINTABLE, { message: 'kind must not contain control characters' })
  kind!: string;

  @ApiProperty({ example: 'device-17', maxLength: LOOKUP_KEY_MAX_LENGTH, description: 'What it follows' })
  @IsString()
  @Length(1, LOOKUP_KEY_MAX_LENGTH)
  @Matches(PRINTABLE, { message: 'key must not contain control characters' })
  key!: string;

  @ApiPropertyOptional({ default: DEFAULT_TRACE_SEC, minimum: 1, maximum: MAX_TRACE_SEC })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TRACE_SEC)
  durationSec?: number;
}

/** The path of one trace. */
export class TraceParams {
  @ApiProperty({ description: 'A trace id from POST or GET /admin/v1/traces' })
  @IsUUID()
  id!: string;
}

/** `?limit=`: the newest events only (all kept by default). */
export class TraceReadQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100_000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  limit?: number;
}

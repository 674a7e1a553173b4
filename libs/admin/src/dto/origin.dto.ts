import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, registerDecorator, ValidateIf } from 'class-validator';
import { compileAllowlist } from '#broker/handshake';

/** 'scheme://host[:port]' (no path, no trailing slash), 'scheme://*.domain[:port]', or 'null'; never '*'. */
export function isOriginEntry(value: unknown): boolean {
  if (typeof value !== 'string' || value === '*' || value.length > 512) return false;
  try {
    compileAllowlist([value]);
    return true;
  } catch {
    return false;
  }
}

function IsOriginEntry(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isOriginEntry',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: isOriginEntry,
        defaultMessage: () =>
          "origin must be 'scheme://host[:port]' without a path or trailing slash, 'scheme://*.domain[:port]', or 'null'",
      },
    });
}

export class AddOriginDto {
  @ApiProperty({ example: 'https://app.example.com' })
  @IsOriginEntry()
  origin!: string;

  @ApiPropertyOptional({
    description: 'An endpoint path as configured; absent or null: every endpoint',
    nullable: true,
    example: '/chat',
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @MaxLength(256)
  endpoint?: string | null;
}

export class ListOriginsQuery {
  @ApiPropertyOptional({ description: "An endpoint path, or 'global' for entries that apply everywhere" })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  endpoint?: string;
}

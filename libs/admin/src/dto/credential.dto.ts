import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
  registerDecorator,
} from 'class-validator';

/** Scopes travel space-separated in JWTs, so one may not contain whitespace. */
const SCOPE = /^[\x21-\x7e]{1,256}$/;

function IsFutureDate(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFutureDate',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && Date.parse(value) > Date.now(),
        defaultMessage: () => 'expiresAt must be in the future',
      },
    });
}

/** A new credential's name, scopes and expiry: the base of every kind's (a module's kind extends it). */
export class CreateTokenDto {
  @ApiProperty({ example: 'dashboard' })
  @IsString()
  @Length(1, 100)
  name!: string;

  @ApiPropertyOptional({ example: ['endpoint:/chat', 'bus:subscribe:sensors/#'], type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @Matches(SCOPE, { each: true, message: 'each scope must be 1-256 printable characters without spaces' })
  scopes?: string[];

  @ApiPropertyOptional({ example: '2027-01-01T00:00:00Z' })
  @IsOptional()
  @IsISO8601({ strict: true })
  @IsFutureDate()
  expiresAt?: string;
}

export class CreatePasswordDto extends CreateTokenDto {
  @ApiProperty({ example: 'device-17' })
  @IsString()
  @Length(1, 128)
  @Matches(/^\P{Cc}+$/u, { message: 'username must not contain control characters' })
  username!: string;

  @ApiProperty({ example: 'correct horse battery staple', writeOnly: true })
  @IsString()
  @Length(8, 1024)
  password!: string;
}

/** An `expiresAt` as stored: UTC ISO-8601, so that text comparison is time comparison in both backends. */
export function storedExpiry(expiresAt: string | undefined): string | null {
  return expiresAt === undefined ? null : new Date(expiresAt).toISOString();
}

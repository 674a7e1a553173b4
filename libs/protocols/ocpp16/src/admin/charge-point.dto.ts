import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';

export class CreateChargePointDto {
  @ApiProperty({ example: 'CP-0001', description: 'The last path segment the charge point connects to' })
  @IsString()
  @Length(1, 48)
  @Matches(/^[^\p{Cc}\s/]+$/u, { message: 'identity must not contain spaces, control characters or /' })
  identity!: string;

  @ApiPropertyOptional({ description: 'HTTP Basic password (security profile 1/2)', writeOnly: true })
  @IsOptional()
  @IsString()
  @Length(16, 40, { message: 'password must be 16 to 40 characters (OCPP AuthorizationKey)' })
  password?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  allowed?: boolean;
}

export class UpdateChargePointDto {
  @ApiPropertyOptional({ nullable: true, writeOnly: true, description: 'null removes the password' })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Length(16, 40, { message: 'password must be 16 to 40 characters (OCPP AuthorizationKey)' })
  password?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  allowed?: boolean;
}

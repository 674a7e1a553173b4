import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsOptional, IsString, MaxLength, registerDecorator } from 'class-validator';
import { PageLimitQuery } from './page-limit.dto.js';

export class ListConnectionsQuery extends PageLimitQuery {
  @ApiPropertyOptional({
    example: '/devices/d1',
    description:
      "An endpoint's pattern as configured (`/devices/:id`: all its connections) or a path a client connects to (`/devices/d1`)",
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  endpoint?: string;

  @ApiPropertyOptional({ example: 'chat.v1' })
  @IsOptional()
  @IsString()
  subprotocol?: string;

  @ApiPropertyOptional({ description: 'The principal subject' })
  @IsOptional()
  @IsString()
  principal?: string;

  @ApiPropertyOptional({ description: 'The client address' })
  @IsOptional()
  @IsString()
  address?: string;
}

/** Codes an operator may send: normal, going away, policy violation, or the application range. */
export function isOperatorCloseCode(code: number): boolean {
  return code === 1000 || code === 1001 || code === 1008 || (code >= 3000 && code <= 4999);
}

function IsOperatorCloseCode(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isOperatorCloseCode',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number.isInteger(value) && isOperatorCloseCode(value),
        defaultMessage: () => 'code must be 1000, 1001, 1008 or 3000-4999',
      },
    });
}

function MaxUtf8Bytes(max: number): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'maxUtf8Bytes',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && Buffer.byteLength(value) <= max,
        defaultMessage: () => `reason must be at most ${max} bytes of UTF-8 (a close frame's limit)`,
      },
    });
}

export class CloseConnectionQuery {
  @ApiPropertyOptional({ default: 1000, example: 4000 })
  @IsOptional()
  @Type(() => Number)
  @IsOperatorCloseCode()
  code?: number;

  @ApiPropertyOptional({ default: 'closed by an operator', maxLength: 123 })
  @IsOptional()
  @IsString()
  @MaxLength(123)
  @MaxUtf8Bytes(123)
  reason?: string;
}

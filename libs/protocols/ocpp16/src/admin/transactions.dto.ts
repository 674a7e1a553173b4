import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class ListTransactionsQuery {
  @ApiPropertyOptional({ example: 'CP-0001' })
  @IsOptional()
  @IsString()
  identity?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'Only ongoing (true) or only finished (false)',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  ongoing?: 'true' | 'false';

  @ApiPropertyOptional({ default: 100, maximum: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { PageLimitQuery } from '#broker/admin';

export class ListTransactionsQuery extends PageLimitQuery {
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
}

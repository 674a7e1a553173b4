import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength } from 'class-validator';

/** A message an operator publishes on the bus (a test message): every protocol's subscribers get it. */
export class PublishDto {
  @ApiProperty({
    example: 'devices/test-1/cmd',
    description: "A topic name: '/'-separated levels, no wildcards",
  })
  @IsString()
  @Length(1, 1024)
  topic!: string;

  @ApiProperty({ example: '{"reboot":true}', description: 'The payload, as UTF-8 text' })
  @IsString()
  payload!: string;

  @ApiPropertyOptional({ example: 'application/json' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  contentType?: string;
}

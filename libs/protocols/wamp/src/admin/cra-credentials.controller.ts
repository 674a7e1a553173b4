import { Body, Controller, Inject, Post } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { Actor, AdminApi, CreateTokenDto, storedExpiry } from '#broker/admin';
import { type CredentialView } from '#broker/store';
import { CraCredentials } from '../store/cra-credentials.js';

export class CreateWampcraDto extends CreateTokenDto {
  @ApiProperty({ example: 'sensor-17', description: 'The WAMP authid the client sends in HELLO' })
  @IsString()
  @Length(1, 256)
  @Matches(/^\P{Cc}+$/u, { message: 'authid must not contain control characters' })
  authid!: string;

  @ApiProperty({ example: 'a long random secret', writeOnly: true })
  @IsString()
  @Length(16, 1024)
  secret!: string;
}

/**
 * Salted WAMP-CRA credentials, beside the broker's own kinds (listed and revoked with them): the client
 * derives the key from its secret with the salt its CHALLENGE carries.
 */
@AdminApi('credentials')
@Controller('admin/v1/credentials')
export class CraCredentialsController {
  constructor(@Inject(CraCredentials) private readonly credentials: CraCredentials) {}

  @Post('wampcra')
  create(@Body() body: CreateWampcraDto, @Actor() actor: string): Promise<CredentialView> {
    return this.credentials.create(
      {
        name: body.name,
        authid: body.authid,
        secret: body.secret,
        scopes: body.scopes ?? [],
        expiresAt: storedExpiry(body.expiresAt),
      },
      actor,
    );
  }
}

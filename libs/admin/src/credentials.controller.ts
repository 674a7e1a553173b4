import { Body, Controller, Delete, Get, Inject, Param, Post } from '@nestjs/common';
import { BrokerStore, type CredentialView } from '#broker/store';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { CreatePasswordDto, CreateTokenDto, storedExpiry } from './dto/credential.dto.js';

/**
 * API tokens and username/password credentials (modules add routes for kinds of their own). Secrets are
 * shown once, at creation, and never again.
 */
@AdminApi('credentials')
@Controller('admin/v1/credentials')
export class CredentialsController {
  constructor(@Inject(BrokerStore) private readonly store: BrokerStore) {}

  @Get()
  list(): Promise<CredentialView[]> {
    return this.store.credentials.list();
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<CredentialView> {
    return this.store.credentials.get(id);
  }

  @Post('tokens')
  async createToken(
    @Body() body: CreateTokenDto,
    @Actor() actor: string,
  ): Promise<CredentialView & { token: string }> {
    const { credential, token } = await this.store.credentials.createToken(
      { name: body.name, scopes: body.scopes ?? [], expiresAt: storedExpiry(body.expiresAt) },
      actor,
    );
    return { ...credential, token };
  }

  @Post('passwords')
  createPassword(@Body() body: CreatePasswordDto, @Actor() actor: string): Promise<CredentialView> {
    return this.store.credentials.createPassword(
      {
        name: body.name,
        username: body.username,
        password: body.password,
        scopes: body.scopes ?? [],
        expiresAt: storedExpiry(body.expiresAt),
      },
      actor,
    );
  }

  /** Revoking keeps the record (and its audit trail); the next handshake with it gets 401. */
  @Delete(':id')
  revoke(@Param('id') id: string, @Actor() actor: string): Promise<CredentialView> {
    return this.store.credentials.revoke(id, actor);
  }
}

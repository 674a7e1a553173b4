import { Body, Controller, Delete, Get, Inject, Param, Post, Query } from '@nestjs/common';
import { EndpointRegistry } from '#broker/gateway';
import { BrokerStore, type OriginEntry } from '#broker/store';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { AddOriginDto, ListOriginsQuery } from './dto/origin.dto.js';
import { InvalidFieldsException } from './problem.filter.js';

/** Run-time origin allowlist entries; they join the configured ones at the next handshake. */
@AdminApi('origins')
@Controller('admin/v1/origins')
export class OriginsController {
  constructor(
    @Inject(BrokerStore) private readonly store: BrokerStore,
    private readonly endpoints: EndpointRegistry,
  ) {}

  @Get()
  list(@Query() query: ListOriginsQuery): Promise<OriginEntry[]> {
    if (query.endpoint === undefined) return this.store.origins.list();
    return this.store.origins.list(query.endpoint === 'global' ? null : query.endpoint);
  }

  @Post()
  add(@Body() body: AddOriginDto, @Actor() actor: string): Promise<OriginEntry> {
    const endpoint = body.endpoint ?? null;
    const paths = this.endpoints.all().map((e) => e.config.path);
    if (endpoint !== null && !paths.includes(endpoint)) {
      throw new InvalidFieldsException([
        {
          field: 'endpoint',
          messages: [`endpoint must be one of the configured paths: ${paths.join(', ')}`],
        },
      ]);
    }
    return this.store.origins.add({ endpoint, origin: body.origin }, actor);
  }

  @Delete(':id')
  remove(@Param('id') id: string, @Actor() actor: string): Promise<OriginEntry> {
    return this.store.origins.remove(id, actor);
  }
}

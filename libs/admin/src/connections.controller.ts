import { Controller, Delete, Get, Inject, NotFoundException, Param, Query } from '@nestjs/common';
import { ConnectionRegistry, type TrackedConnection, BROKER_LOGGER } from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type Logger } from 'pino';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { CloseConnectionQuery, ListConnectionsQuery } from './dto/connection.dto.js';

export interface ConnectionView {
  readonly id: string;
  readonly endpoint: string;
  readonly subprotocol: string;
  readonly principal: string | null;
  readonly address: string;
  readonly openedAt: string;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

function view(c: TrackedConnection): ConnectionView {
  return {
    id: c.connection.id,
    endpoint: c.endpoint.path,
    subprotocol: c.module.options.name,
    principal: c.principal?.subject ?? null,
    address: c.remoteAddress,
    openedAt: new Date(c.openedAt).toISOString(),
    bytesIn: c.bytesIn,
    bytesOut: c.bytesOut,
  };
}

/** Live connections of this node; closing one sends the given close code to the client. */
@AdminApi('connections')
@Controller('admin/v1/connections')
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionRegistry,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  list(@Query() query: ListConnectionsQuery): ConnectionView[] {
    const limit = query.limit ?? 100;
    const found: ConnectionView[] = [];
    for (const tracked of this.connections.all()) {
      const v = view(tracked);
      if (query.endpoint !== undefined && v.endpoint !== query.endpoint) continue;
      if (query.subprotocol !== undefined && v.subprotocol !== query.subprotocol) continue;
      if (query.principal !== undefined && v.principal !== query.principal) continue;
      if (query.address !== undefined && v.address !== query.address) continue;
      found.push(v);
      if (found.length >= limit) break;
    }
    return found;
  }

  @Get(':id')
  get(@Param('id') id: string): ConnectionView {
    return view(this.find(id));
  }

  @Delete(':id')
  async close(
    @Param('id') id: string,
    @Query() query: CloseConnectionQuery,
    @Actor() actor: string,
  ): Promise<ConnectionView> {
    const tracked = this.find(id);
    const code = query.code ?? 1000;
    const reason = query.reason ?? 'closed by an operator';
    const before = view(tracked);
    this.logger.info({ connection: id, code, actor }, 'connection closed through the admin API');
    tracked.connection.close(code, reason);
    await this.store.audit.record({
      actor,
      action: 'connection.close',
      target: id,
      before,
      after: { code, reason },
    });
    return before;
  }

  private find(id: string): TrackedConnection {
    const tracked = this.connections.get(id);
    if (tracked === undefined) throw new NotFoundException(`no open connection ${id}`);
    return tracked;
  }
}

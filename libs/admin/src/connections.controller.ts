import { Controller, Delete, Get, Inject, NotFoundException, Param, Query, Res } from '@nestjs/common';
import { BROKER_LOGGER } from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type Response } from 'express';
import { type Logger } from 'pino';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { ConnectionDirectory } from './connection-directory.js';
import { type ConnectionView } from './connection-view.js';
import { CloseConnectionQuery, ListConnectionsQuery } from './dto/connection.dto.js';

/** Names the cluster nodes that did not answer, so a partial answer never reads as a whole one. */
export const MISSING_NODES_HEADER = 'Broker-Missing-Nodes';

/**
 * Live connections (of every live node in cluster mode, each naming its node); closing one sends the
 * given close code to the client, from whichever node the request reached.
 */
@AdminApi('connections')
@Controller('admin/v1/connections')
export class ConnectionsController {
  constructor(
    private readonly directory: ConnectionDirectory,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  async list(
    @Query() query: ListConnectionsQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ConnectionView[]> {
    const { connections, missing } = await this.directory.list({ ...query, limit: query.limit ?? 100 });
    if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
    return connections;
  }

  @Get(':id')
  async get(@Param('id') id: string): Promise<ConnectionView> {
    const { view, missing } = await this.directory.get(id);
    return found(id, view, missing);
  }

  @Delete(':id')
  async close(
    @Param('id') id: string,
    @Query() query: CloseConnectionQuery,
    @Actor() actor: string,
  ): Promise<ConnectionView> {
    const code = query.code ?? 1000;
    const reason = query.reason ?? 'closed by an operator';
    const { view, missing } = await this.directory.close({ id, code, reason });
    const before = found(id, view, missing);
    this.logger.info(
      { connection: id, node: before.node, code, actor },
      'connection closed through the admin API',
    );
    await this.store.audit.record({
      actor,
      action: 'connection.close',
      target: id,
      before,
      after: { code, reason },
    });
    return before;
  }
}

function found(id: string, view: ConnectionView | null, missing: string[]): ConnectionView {
  if (view !== null) return view;
  const unasked = missing.length > 0 ? ` (nodes ${missing.join(', ')} did not answer)` : '';
  throw new NotFoundException(`no open connection ${id}${unasked}`);
}

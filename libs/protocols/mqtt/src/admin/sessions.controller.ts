import { Controller, Delete, Get, HttpCode, Inject, NotFoundException, Param, Res } from '@nestjs/common';
import { Actor, AdminApi, MISSING_NODES_HEADER } from '#broker/admin';
import { BROKER_LOGGER } from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type Response } from 'express';
import { type Logger } from 'pino';
import { SessionLookup } from './session-lookup.js';
import { type MqttSessionView } from './session-view.js';

/**
 * An MQTT session by client id, on whichever node holds it: its connection (close it through
 * /admin/v1/connections), subscriptions, queued and in-flight counts, will; and discarding it.
 */
@AdminApi('mqtt')
@Controller('admin/v1/mqtt/sessions')
export class MqttSessionsController {
  constructor(
    private readonly sessions: SessionLookup,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Get(':clientId')
  async get(
    @Param('clientId') clientId: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MqttSessionView> {
    const { view, missing } = await this.sessions.find(clientId);
    // A partial answer never reads as a whole one.
    if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
    if (view !== null) return view;
    throw notFound(clientId, missing);
  }

  /**
   * Discards the session: its connection gets DISCONNECT 0x98 (administrative action) and closes, and
   * the session ends as at its expiry (subscriptions and queued messages gone, its will sent). The
   * client starts afresh at its next CONNECT (session present 0).
   */
  @Delete(':clientId')
  @HttpCode(204)
  async discard(
    @Param('clientId') clientId: string,
    @Actor() actor: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const { view: before, missing } = await this.sessions.discard(clientId);
    if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
    if (before === null) throw notFound(clientId, missing);
    this.logger.info({ clientId, actor }, 'mqtt session discarded through the admin API');
    await this.store.audit.record({
      actor,
      action: 'mqtt.session.discard',
      target: clientId,
      before,
      after: null,
    });
  }
}

function notFound(clientId: string, missing: readonly string[]): NotFoundException {
  const unasked = missing.length > 0 ? ` (nodes ${missing.join(', ')} did not answer)` : '';
  return new NotFoundException(`no MQTT session ${clientId}${unasked}`);
}

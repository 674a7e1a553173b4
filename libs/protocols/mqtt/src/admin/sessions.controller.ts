import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { AdminApi, MISSING_NODES_HEADER } from '#broker/admin';
import { type Response } from 'express';
import { SessionLookup } from './session-lookup.js';
import { type MqttSessionView } from './session-view.js';

/**
 * An MQTT session by client id, on whichever node holds it: its connection (close it through
 * /admin/v1/connections), subscriptions, queued and in-flight counts, will.
 */
@AdminApi('mqtt')
@Controller('admin/v1/mqtt/sessions')
export class MqttSessionsController {
  constructor(private readonly sessions: SessionLookup) {}

  @Get(':clientId')
  async get(
    @Param('clientId') clientId: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MqttSessionView> {
    const { view, missing } = await this.sessions.find(clientId);
    // A partial answer never reads as a whole one.
    if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
    if (view !== null) return view;
    const unasked = missing.length > 0 ? ` (nodes ${missing.join(', ')} did not answer)` : '';
    throw new NotFoundException(`no MQTT session ${clientId}${unasked}`);
  }
}

import { Body, Controller, HttpCode, Inject, Param, Post, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOperation } from '@nestjs/swagger';
import { Actor, AdminApi, InvalidFieldsException } from '#broker/admin';
import { BROKER_LOGGER } from '#broker/gateway';
import { type Logger } from 'pino';
import { OcppError } from '../errors.js';
import { OcppCallService } from '../ocpp-calls.service.js';
import { OcppCallFilter } from './ocpp-call.filter.js';

/** Central-system-initiated calls: the body is the OCPP payload, the answer the charge point's. */
@AdminApi('ocpp')
@Controller('admin/v1/charge-points')
export class OcppCallsController {
  constructor(
    private readonly calls: OcppCallService,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Post(':identity/calls/:action')
  @HttpCode(200)
  @UseFilters(OcppCallFilter)
  @ApiOperation({
    summary:
      'Send an OCPP 1.6 CALL (Reset, RemoteStartTransaction, ...) and answer with its CALLRESULT payload',
    description:
      '400: the payload fails the action schema; 404: unknown action or charge point not connected; ' +
      '502: CALLERROR (ocppError), invalid answer or disconnect; 503: too many calls waiting; 504: no answer in time.',
  })
  @ApiBody({ schema: { type: 'object', example: { type: 'Soft' } }, required: false })
  async call(
    @Param('identity') identity: string,
    @Param('action') action: string,
    @Body() body: unknown,
    @Actor() actor: string,
  ): Promise<unknown> {
    // No body at all (curl -X POST) is the empty payload of ClearCache and friends.
    const payload = body === undefined ? {} : body;
    this.logger.info({ chargePoint: identity, action, actor }, 'ocpp: call through the admin API');
    try {
      return await this.calls.call(identity, action, payload);
    } catch (err) {
      if (err instanceof OcppError) {
        throw new InvalidFieldsException([
          { field: fieldOf(err), messages: [`${err.code}: ${err.message}`] },
        ]);
      }
      throw err;
    }
  }
}

function fieldOf(err: OcppError): string {
  const path = typeof err.details['path'] === 'string' ? err.details['path'] : '';
  return path === '' ? 'body' : path.slice(1).replaceAll('/', '.');
}

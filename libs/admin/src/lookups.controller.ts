import { Controller, Get, HttpCode, Inject, NotFoundException, Param, Post, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import {
  BROKER_LOGGER,
  type DashboardLookup,
  GatewayMetrics,
  type LookupInfo,
  type LookupView,
} from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type Response } from 'express';
import { type Logger } from 'pino';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { MISSING_NODES_HEADER } from './connections.controller.js';
import { LookupActionParams, LookupParams } from './dto/lookup.dto.js';

/**
 * The modules' lookups (GatewayMetrics.lookups): one thing found by its key on whichever node holds
 * it, shown as the module describes it, and the actions it offers on it. Names no module: each lookup
 * is its own.
 */
@AdminApi('dashboard')
@Controller('admin/v1/lookups')
export class LookupsController {
  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The lookups the modules offer: id, title and what the key is' })
  list(): LookupInfo[] {
    return this.metrics.lookups.list();
  }

  @Get(':id/:key')
  @ApiOperation({
    summary: 'What a lookup finds by its key',
    description:
      '404 when the lookup is unknown or finds nothing; Broker-Missing-Nodes names the cluster nodes that did not answer.',
  })
  async find(@Param() params: LookupParams, @Res({ passthrough: true }) res: Response): Promise<LookupView> {
    const lookup = this.lookup(params.id);
    const result = await lookup.find(params.key);
    const missing = result.found ? result.view.missing : result.missing;
    // A partial answer never reads as a whole one.
    if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
    if (result.found) return result.view;
    throw new NotFoundException(`no ${lookup.title} ${params.key}${unasked(missing)}`);
  }

  @Post(':id/:key/actions/:action')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Does one of the actions a found view offers',
    description: '404 when the lookup or the action is unknown, or there is nothing it applies to now.',
  })
  async act(@Param() params: LookupActionParams, @Actor() actor: string): Promise<void> {
    const lookup = this.lookup(params.id);
    const outcome = await lookup.act(params.key, params.action, actor);
    if (outcome !== 'done') {
      throw new NotFoundException(`nothing to ${params.action} for ${lookup.title} ${params.key}`);
    }
    this.logger.info(
      { lookup: lookup.id, key: params.key, action: params.action, actor },
      'lookup action through the admin API',
    );
    await this.store.audit.record({
      actor,
      action: `${lookup.id}.${params.action}`,
      target: params.key,
      before: null,
      after: null,
    });
  }

  private lookup(id: string): DashboardLookup {
    const lookup = this.metrics.lookups.get(id);
    if (lookup === undefined) throw new NotFoundException(`no lookup ${id}`);
    return lookup;
  }
}

function unasked(missing: readonly string[]): string {
  return missing.length > 0 ? ` (nodes ${missing.join(', ')} did not answer)` : '';
}

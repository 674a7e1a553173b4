import {
  Body,
  ConflictException,
  Controller,
  Delete,
  Get,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { ApiOperation, ApiProduces } from '@nestjs/swagger';
import { BROKER_LOGGER, GatewayMetrics } from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type Response } from 'express';
import { type Logger } from 'pino';
import { Actor, AdminApi } from '../admin-api.decorator.js';
import { MISSING_NODES_HEADER } from '../connections.controller.js';
import { DEFAULT_TRACE_SEC, StartTraceDto, TraceParams, TraceReadQuery } from '../dto/trace.dto.js';
import { InvalidFieldsException } from '../problem.filter.js';
import { TraceDirectory } from './trace-directory.js';
import { TraceRefusedError } from './trace-recorder.js';
import { type TraceList, type TraceSummary, type TraceView } from './trace-view.js';

/**
 * Traces: what one of the modules' trace kinds selects (a client's packets, the messages on a topic
 * filter), as each node saw it, with time, node and outcome and never a payload. Names no module.
 */
@AdminApi('dashboard')
@Controller('admin/v1/traces')
export class TracesController {
  constructor(
    private readonly directory: TraceDirectory,
    private readonly metrics: GatewayMetrics,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'The kinds of trace the modules offer, and the traces running or kept (newest first)',
    description: 'Broker-Missing-Nodes names the cluster nodes that did not answer.',
  })
  async list(@Res({ passthrough: true }) res: Response): Promise<TraceList> {
    const { traces, missing } = await this.directory.list();
    missingHeader(res, missing);
    return { kinds: this.metrics.traces.list(), traces, missing };
  }

  @Post()
  @ApiOperation({
    summary: 'Starts a trace on every live node; it stops itself after durationSec',
    description:
      '400 for a kind no module offers or a key it cannot follow; 409 when the most traces allowed at once are running.',
  })
  async start(@Body() body: StartTraceDto, @Actor() actor: string): Promise<TraceSummary> {
    const kind = this.metrics.traces.get(body.kind);
    if (kind === undefined) {
      const known = this.metrics.traces.list().map((k) => k.id);
      throw new InvalidFieldsException([
        {
          field: 'kind',
          messages: [`kind must be one of: ${known.join(', ') || 'none (no module offers one)'}`],
        },
      ]);
    }
    const invalid = kind.invalid(body.key);
    if (invalid !== null) throw new InvalidFieldsException([{ field: 'key', messages: [invalid] }]);
    const durationSec = body.durationSec ?? DEFAULT_TRACE_SEC;
    let trace: TraceSummary;
    try {
      trace = await this.directory.start(body.kind, body.key, durationSec, actor);
    } catch (err) {
      if (err instanceof TraceRefusedError && err.status === 409) throw new ConflictException(err.message);
      throw err;
    }
    this.logger.info(
      { trace: trace.id, kind: body.kind, key: body.key, durationSec, actor },
      'trace started',
    );
    await this.store.audit.record({
      actor,
      action: 'trace.start',
      target: trace.id,
      before: null,
      after: { kind: body.kind, key: body.key, durationSec },
    });
    return trace;
  }

  @Get(':id')
  @ApiOperation({
    summary: 'A trace with its events from every node, oldest first',
    description:
      '404 when no answering node knows it; Broker-Missing-Nodes names the nodes that did not answer.',
  })
  async read(
    @Param() params: TraceParams,
    @Query() query: TraceReadQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TraceView> {
    const trace = await this.found(this.directory.read(params.id, query.limit), params.id);
    missingHeader(res, trace.missing);
    return trace;
  }

  @Get(':id/download')
  @ApiProduces('application/x-ndjson')
  @ApiOperation({
    summary: "A trace's events as a file: one JSON object a line, oldest first",
    description:
      '404 when no answering node knows it; Broker-Missing-Nodes names the nodes that did not answer.',
  })
  async download(@Param() params: TraceParams, @Res({ passthrough: true }) res: Response): Promise<string> {
    const trace = await this.found(this.directory.read(params.id), params.id);
    missingHeader(res, trace.missing);
    res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="trace-${trace.id}.ndjson"`);
    return trace.events.map((event) => `${JSON.stringify(event)}\n`).join('');
  }

  @Delete(':id')
  @ApiOperation({
    summary: 'Stops a trace on every node that runs it; its events stay readable',
    description: '404 when no answering node knows it.',
  })
  async stop(@Param() params: TraceParams, @Actor() actor: string): Promise<TraceSummary> {
    const trace = await this.found(this.directory.stop(params.id), params.id);
    this.logger.info({ trace: trace.id, actor }, 'trace stopped');
    await this.store.audit.record({
      actor,
      action: 'trace.stop',
      target: trace.id,
      before: { kind: trace.kind, key: trace.key },
      after: null,
    });
    return trace;
  }

  private async found<T extends TraceSummary>(pending: Promise<T | null>, id: string): Promise<T> {
    const trace = await pending;
    if (trace === null) throw new NotFoundException(`no trace ${id}`);
    return trace;
  }
}

/** A partial answer never reads as a whole one. */
function missingHeader(res: Response, missing: readonly string[]): void {
  if (missing.length > 0) res.setHeader(MISSING_NODES_HEADER, missing.join(', '));
}

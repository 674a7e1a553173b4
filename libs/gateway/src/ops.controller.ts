import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { type Response } from 'express';
import { ConnectionRegistry } from './connection-registry.js';
import { HealthChecks } from './health-checks.js';
import { GatewayMetrics } from './metrics.js';

/** Liveness, readiness and Prometheus metrics for operators and orchestrators. */
@Controller()
export class OpsController {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly connections: ConnectionRegistry,
    private readonly checks: HealthChecks,
  ) {}

  @Get('health')
  @HttpCode(200)
  health(): { status: string; connections: number } {
    return { status: 'ok', connections: this.connections.open() };
  }

  /** Ready: not draining and every service the node depends on answers (each one is listed). */
  @Get('health/ready')
  async ready(@Res() res: Response): Promise<void> {
    const services = await this.checks.report();
    const down = Object.values(services).includes('down');
    const status = this.connections.draining ? 'draining' : down ? 'unavailable' : 'ready';
    res.status(status === 'ready' ? 200 : 503).json({ status, services });
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async prometheus(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}

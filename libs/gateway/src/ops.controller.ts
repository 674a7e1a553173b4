import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { type Response } from 'express';
import { ConnectionRegistry } from './connection-registry.js';
import { GatewayMetrics } from './metrics.js';

/** Liveness, readiness and Prometheus metrics for operators and orchestrators. */
@Controller()
export class OpsController {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly connections: ConnectionRegistry,
  ) {}

  @Get('health')
  @HttpCode(200)
  health(): { status: string; connections: number } {
    return { status: 'ok', connections: this.connections.open() };
  }

  @Get('health/ready')
  ready(@Res() res: Response): void {
    const draining = this.connections.draining;
    res.status(draining ? 503 : 200).json({ status: draining ? 'draining' : 'ready' });
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async prometheus(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}

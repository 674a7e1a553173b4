import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { ConnectionRegistry, HealthChecks } from '#broker/gateway';

/**
 * The broker's readiness as a @nestjs/terminus indicator, for an application that serves its own
 * health page: down while draining or while a service the node depends on (the store, NATS) is
 * down; up otherwise, with the open connections and each service. List it in a module that
 * imports TerminusModule, and call `isHealthy()` in a `HealthCheckService.check([...])`.
 */
@Injectable()
export class BrokerHealthIndicator {
  constructor(
    private readonly indicator: HealthIndicatorService,
    private readonly checks: HealthChecks,
    private readonly connections: ConnectionRegistry,
  ) {}

  async isHealthy<const Key extends string = 'broker'>(
    key: Key = 'broker' as Key,
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.indicator.check(key);
    const services = await this.checks.report();
    const data = { connections: this.connections.open(), draining: this.connections.draining, services };
    const down = this.connections.draining || Object.values(services).includes('down');
    return down ? session.down(data) : session.up(data);
  }
}

import { Injectable } from '@nestjs/common';
import { type EndpointSpec } from '#broker/handshake';
import { ConnectionRegistry } from './connection-registry.js';

/**
 * One timer per endpoint: each tick terminates connections that did not answer the previous ping
 * (nor send anything since), then pings the rest. Keeps idle connections alive through proxies
 * and load balancers with 60 s idle timeouts, and frees sockets of vanished peers.
 */
@Injectable()
export class Heartbeat {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly connections: ConnectionRegistry) {}

  start(endpoint: EndpointSpec, intervalMs: number): void {
    if (intervalMs === 0) return;
    const timer = setInterval(() => this.tick(endpoint), intervalMs);
    timer.unref();
    this.timers.push(timer);
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }

  private tick(endpoint: EndpointSpec): void {
    for (const tracked of this.connections.onEndpoint(endpoint)) {
      if (!tracked.alive) {
        tracked.ws.terminate();
        continue;
      }
      tracked.alive = false;
      tracked.ws.ping();
    }
  }
}

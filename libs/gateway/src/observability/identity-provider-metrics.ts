import { type IntrospectionStats, type RemoteKeyStats } from '#broker/auth';
import { Counter, Gauge } from 'prom-client';
import { type GatewayMetrics } from './metrics.js';

/** The identity provider's key set on /metrics: its fetches by outcome, its keys, the age of the last good fetch. */
export function registerJwksMetrics(metrics: GatewayMetrics, stats: RemoteKeyStats): void {
  const registers = [metrics.registry];
  new Counter({
    name: 'broker_jwks_fetches_total',
    help: "Fetches of the identity provider's keys (JWKS, OpenID Connect discovery) by outcome",
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      this.inc({ outcome: 'ok' }, stats.fetched);
      this.inc({ outcome: 'failed' }, stats.failed);
    },
  });
  new Gauge({
    name: 'broker_jwks_keys',
    help: "Keys in the identity provider's key set as last fetched (0: none yet)",
    registers,
    collect() {
      this.set(stats.keys);
    },
  });
  new Gauge({
    name: 'broker_jwks_age_seconds',
    help: "Seconds since the identity provider's keys were last fetched (-1: never)",
    registers,
    collect() {
      this.set(stats.loadedAt === null ? -1 : (Date.now() - stats.loadedAt) / 1000);
    },
  });
}

/** Token introspection on /metrics: the endpoint's requests by outcome (the cache answers the rest). */
export function registerIntrospectionMetrics(metrics: GatewayMetrics, stats: IntrospectionStats): void {
  new Counter({
    name: 'broker_introspection_requests_total',
    help: "Requests to the identity provider's token introspection endpoint by outcome",
    labelNames: ['outcome'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'answered' }, stats.asked - stats.failed);
      this.inc({ outcome: 'failed' }, stats.failed);
    },
  });
}

import { GatewayMetrics } from '#broker/gateway';
import { Counter, Gauge } from 'prom-client';
import { type ClusterNode } from './cluster-node.js';
import { type NatsTopicBus } from './nats-topic-bus.js';

/** Counts read when Prometheus scrapes; the bus keeps plain numbers on its hot path. */
function counter(name: string, help: string, metrics: GatewayMetrics, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** The cluster's Prometheus metrics, on the gateway's registry so /metrics shows them. */
export function registerClusterMetrics(metrics: GatewayMetrics, node: ClusterNode, bus: NatsTopicBus): void {
  counter(
    'broker_cluster_bus_sent_total',
    'Bus messages this node sent to NATS',
    metrics,
    () => bus.stats.sent,
  );
  counter(
    'broker_cluster_bus_received_total',
    'Bus messages this node took from NATS (other nodes publishing to its filters)',
    metrics,
    () => bus.stats.received,
  );
  counter(
    'broker_cluster_bus_dropped_total',
    'Messages on bus subjects dropped as malformed or not sendable',
    metrics,
    () => bus.stats.dropped,
  );
  new Gauge({
    name: 'broker_cluster_nodes',
    help: 'Live nodes of the cluster as this node sees them, itself included',
    registers: [metrics.registry],
    collect() {
      this.set(node.membership.live().length);
    },
  });
  new Gauge({
    name: 'broker_cluster_nats_connected',
    help: '1 while this node is connected to NATS',
    registers: [metrics.registry],
    collect() {
      this.set(node.isConnected ? 1 : 0);
    },
  });
}

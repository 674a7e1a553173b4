import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { BROKER_LOGGER, GatewayMetrics } from '#broker/gateway';
import { type Logger } from 'pino';
import { Gauge } from 'prom-client';
import { ALARMS, activeAlarms, type AlarmName, type AlarmReading } from './alarm-check.js';
import { type AlarmView } from './snapshot.types.js';

/** How often the alarms are judged. */
const CHECK_MS = 5000;
/** Cleared alarms kept for the dashboard. */
const CLEARED_KEPT = 20;
/** Every protocol's counters of messages shed for slow consumers. */
const DROP_COUNTERS = ['broker_messages_dropped_total', 'broker_mqtt_messages_dropped_total'];

/**
 * The broker's alarms, judged every few seconds whether anyone watches: each raised and cleared once,
 * with a log line (warn, then info) and the `broker_alarm_active{alarm}` gauge at 1 while it holds; the
 * dashboard shows those active and the last ones cleared.
 */
@Injectable()
export class Alarms implements OnModuleInit, OnModuleDestroy {
  private readonly active = new Map<AlarmName, number>();
  private readonly cleared: AlarmView[] = [];
  private last: AlarmReading | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly gauge: Gauge<'alarm'>;

  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {
    this.gauge = new Gauge({
      name: 'broker_alarm_active',
      help: 'Whether an alarm holds (1) or not (0): nats-unreachable, refusal-surge, shedding',
      labelNames: ['alarm'] as const,
      registers: [metrics.registry],
    });
    for (const name of Object.keys(ALARMS)) this.gauge.set({ alarm: name }, 0);
  }

  onModuleInit(): void {
    // The first reading at once: the first check's window starts at boot.
    void this.check();
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The alarms that hold now, oldest first, and the last ones cleared, newest first. */
  view(): { readonly active: AlarmView[]; readonly cleared: readonly AlarmView[] } {
    const active = [...this.active].map(([name, since]) => ({
      name,
      title: ALARMS[name],
      since,
      until: null,
    }));
    return { active, cleared: this.cleared };
  }

  private async check(): Promise<void> {
    const reading: AlarmReading = {
      natsConnected: this.cluster === null ? null : this.cluster.isConnected,
      refusals:
        this.metrics.refusals.total + (await this.counted('broker_connections_refused_at_accept_total')),
      dropped: await this.dropped(),
      at: performance.now(),
    };
    const now = activeAlarms(this.last, reading);
    this.last = reading;
    const wall = Date.now();
    for (const name of now) {
      if (this.active.has(name)) continue;
      this.active.set(name, wall);
      this.gauge.set({ alarm: name }, 1);
      this.logger.warn({ alarm: name }, `alarm raised: ${ALARMS[name]}`);
    }
    for (const [name, since] of this.active) {
      if (now.has(name)) continue;
      this.active.delete(name);
      this.gauge.set({ alarm: name }, 0);
      this.cleared.unshift({ name, title: ALARMS[name], since, until: wall });
      this.cleared.length = Math.min(this.cleared.length, CLEARED_KEPT);
      this.logger.info({ alarm: name, ms: wall - since }, `alarm cleared: ${ALARMS[name]}`);
    }
  }

  private async dropped(): Promise<number> {
    let total = 0;
    for (const name of DROP_COUNTERS) total += await this.counted(name);
    return total;
  }

  /** A counter's total over its labels; 0 when it is not registered (its module is not loaded). */
  private async counted(name: string): Promise<number> {
    const metric = this.metrics.registry.getSingleMetric(name);
    if (metric === undefined) return 0;
    let total = 0;
    for (const { value } of (await metric.get()).values) total += value;
    return total;
  }
}

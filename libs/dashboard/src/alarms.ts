import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { BROKER_LOGGER, GatewayMetrics, withinTime } from '#broker/gateway';
import { type Logger } from 'pino';
import { Gauge } from 'prom-client';
import { ALARMS, activeAlarms, type AlarmReading } from './alarm-check.js';
import { type AlarmView } from './snapshot.types.js';

/** How often the alarms are judged. */
const CHECK_MS = 5000;
/** What a module's alarm check that outlasts the interval yields. */
const LATE: unique symbol = Symbol('late');
/** Cleared alarms kept for the dashboard. */
const CLEARED_KEPT = 20;
/**
 * The counters of messages shed, the gateway's and any module's own (named `broker_<module>_messages_
 * dropped_total` by convention): the alarm names no protocol.
 */
const DROP_COUNTER = /^broker_(?:[a-z0-9_]+_)?messages_dropped_total$/;

/**
 * The broker's alarms, judged every few seconds whether anyone watches: each raised and cleared once,
 * with a log line (warn, then info) and the `broker_alarm_active{alarm}` gauge at 1 while it holds; the
 * dashboard shows those active and the last ones cleared.
 */
@Injectable()
export class Alarms implements OnModuleInit, OnModuleDestroy {
  /** The alarms that hold, the broker's and the modules': since when (epoch ms), and what they concern. */
  private readonly active = new Map<string, { since: number; detail: string | null }>();
  /** Every alarm's title, by name: the broker's, and the modules' as they are first judged. */
  private readonly titles = new Map<string, string>(Object.entries(ALARMS));
  private readonly cleared: AlarmView[] = [];
  private last: AlarmReading | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly gauge: Gauge<'alarm'>;
  /** Nodes whose heartbeats timed out, until they are back (or leave cleanly). */
  private readonly gone = new Set<string>();
  private offMembership: (() => void) | null = null;

  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {
    this.gauge = new Gauge({
      name: 'broker_alarm_active',
      help: `Whether an alarm holds (1) or not (0): ${Object.keys(ALARMS).join(', ')} and those the modules add`,
      labelNames: ['alarm'] as const,
      registers: [metrics.registry],
    });
    for (const name of Object.keys(ALARMS)) this.gauge.set({ alarm: name }, 0);
  }

  onModuleInit(): void {
    this.offMembership =
      this.cluster?.membership.onChange((change) => {
        if (!change.up && change.why === 'heartbeat timed out') this.gone.add(change.node);
        else this.gone.delete(change.node);
      }) ?? null;
    // The first reading at once: the first check's window starts at boot.
    void this.check();
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    this.offMembership?.();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The alarms that hold now, oldest first, and the last ones cleared, newest first. */
  view(): { readonly active: AlarmView[]; readonly cleared: readonly AlarmView[] } {
    const active = [...this.active].map(([name, { since, detail }]) => ({
      name,
      title: this.titleOf(name),
      detail,
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
      nodesGone: [...this.gone].sort(),
      at: performance.now(),
    };
    const now = new Map<string, string | null>();
    for (const name of activeAlarms(this.last, reading)) {
      now.set(name, name === 'node-gone' ? reading.nodesGone.join(', ') : null);
    }
    this.last = reading;
    for (const [name, detail] of await this.modulesAlarms()) now.set(name, detail);
    const wall = Date.now();
    for (const [name, detail] of now) {
      const held = this.active.get(name);
      if (held !== undefined) {
        if (held.detail !== detail) {
          this.logger.warn({ alarm: name, detail }, `alarm holds: ${this.titleOf(name)}`);
        }
        held.detail = detail;
        continue;
      }
      this.active.set(name, { since: wall, detail });
      this.gauge.set({ alarm: name }, 1);
      this.logger.warn({ alarm: name, detail }, `alarm raised: ${this.titleOf(name)}`);
    }
    for (const [name, { since, detail }] of this.active) {
      if (now.has(name)) continue;
      this.active.delete(name);
      this.gauge.set({ alarm: name }, 0);
      this.cleared.unshift({ name, title: this.titleOf(name), detail, since, until: wall });
      this.cleared.length = Math.min(this.cleared.length, CLEARED_KEPT);
      this.logger.info({ alarm: name, ms: wall - since }, `alarm cleared: ${this.titleOf(name)}`);
    }
  }

  /**
   * The modules' alarms that hold, with their details; one whose check fails or outlasts the interval is
   * logged and counts as not holding.
   */
  private async modulesAlarms(): Promise<Map<string, string | null>> {
    const holding = new Map<string, string | null>();
    for (const alarm of this.metrics.alarms.all()) {
      if (!this.titles.has(alarm.name)) {
        this.titles.set(alarm.name, alarm.title);
        this.gauge.set({ alarm: alarm.name }, 0);
      }
      try {
        const detail = await withinTime(Promise.resolve(alarm.check()), CHECK_MS, LATE);
        if (detail === LATE) throw new Error('no answer within the check interval');
        if (detail !== null) holding.set(alarm.name, detail === '' ? null : detail);
      } catch (err) {
        this.logger.warn({ alarm: alarm.name, err: (err as Error).message }, 'alarm not judged');
      }
    }
    return holding;
  }

  private titleOf(name: string): string {
    return this.titles.get(name) ?? name;
  }

  private async dropped(): Promise<number> {
    let total = 0;
    for (const metric of this.metrics.registry.getMetricsAsArray()) {
      if (DROP_COUNTER.test(metric.name)) total += await this.counted(metric.name);
    }
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

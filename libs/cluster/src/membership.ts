import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type QueuedIterator } from '@nats-io/nats-core';
import { type Logger } from 'pino';

export interface MembershipOptions {
  readonly nodeId: string;
  readonly heartbeatMs: number;
  readonly nodeTimeoutMs: number;
  readonly logger: Logger;
  /** Whether this node's NATS connection is up; while it is down nobody is declared dead. */
  readonly connected: () => boolean;
}

export interface MembershipChange {
  readonly node: string;
  readonly up: boolean;
}

/**
 * Which nodes are alive, from the engine rather than a protocol of ours: each node renews a heartbeat
 * entry in a KV bucket, every node watches the bucket, and a node whose entry has not changed for
 * `nodeTimeoutMs` (by this node's clock: no clock of another machine is compared) is dead. A node that
 * stops cleanly deletes its entry, so the others see it go at once.
 */
export class Membership {
  /** Other nodes, with when this node last saw their heartbeat (performance.now()). */
  private readonly lastSeen = new Map<string, number>();
  private readonly listeners = new Set<(change: MembershipChange) => void>();
  private timer: NodeJS.Timeout | null = null;
  private watcher: QueuedIterator<KvWatchEntry> | null = null;
  private stopped = false;
  private wasConnected = true;

  constructor(
    private readonly kv: KV,
    private readonly options: MembershipOptions,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    await this.watch();
    this.timer = setInterval(() => this.tick(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Live nodes, this one included, sorted. */
  live(): string[] {
    return [this.options.nodeId, ...this.lastSeen.keys()].sort();
  }

  isLive(node: string): boolean {
    return node === this.options.nodeId || this.lastSeen.has(node);
  }

  /** Called for each node that joins or leaves the live set; returns the unsubscribe. */
  onChange(listener: (change: MembershipChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops renewing and deletes this node's entry, so the others see it leave without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.watcher?.stop();
    await this.kv.delete(this.options.nodeId).catch(() => undefined);
  }

  private tick(): void {
    const connected = this.options.connected();
    if (!connected) {
      this.wasConnected = false;
      return;
    }
    const now = performance.now();
    if (!this.wasConnected) {
      // Back from an outage: heartbeats could not reach us, so nobody is judged on that gap.
      this.wasConnected = true;
      for (const node of this.lastSeen.keys()) this.lastSeen.set(node, now);
    }
    this.beat().catch((err: unknown) =>
      this.options.logger.warn({ err: (err as Error).message }, 'cluster heartbeat not written'),
    );
    for (const [node, seen] of this.lastSeen) {
      if (now - seen > this.options.nodeTimeoutMs) this.leave(node, 'heartbeat timed out');
    }
  }

  private async beat(): Promise<void> {
    await this.kv.put(this.options.nodeId, JSON.stringify({ at: Date.now() }));
  }

  private async watch(): Promise<void> {
    const watcher = await this.kv.watch();
    this.watcher = watcher;
    void (async () => {
      for await (const entry of watcher) this.seen(entry);
    })().then(
      () => this.rewatch(),
      (err: unknown) => {
        this.options.logger.warn({ err: (err as Error).message }, 'cluster membership watch failed');
        this.rewatch();
      },
    );
  }

  /** The watch ended without stop(): start another, so membership never silently freezes. */
  private rewatch(): void {
    if (this.stopped) return;
    const retry = setTimeout(() => {
      this.watch().catch(() => this.rewatch());
    }, this.options.heartbeatMs);
    retry.unref();
  }

  private seen(entry: KvWatchEntry): void {
    const node = entry.key;
    if (node === this.options.nodeId) return;
    if (entry.operation !== 'PUT') {
      this.leave(node, 'left the cluster');
      return;
    }
    const known = this.lastSeen.has(node);
    // A replayed entry (not a live update) may be a dead node's last beat that the bucket keeps until
    // its age limit: judged by the server's time of writing, the only moment a replay knows.
    if (!known && !entry.isUpdate && Date.now() - entry.created.getTime() > this.options.nodeTimeoutMs)
      return;
    this.lastSeen.set(node, performance.now());
    if (!known) {
      this.options.logger.info({ peer: node }, 'cluster node joined');
      this.emit({ node, up: true });
    }
  }

  private leave(node: string, why: string): void {
    if (!this.lastSeen.delete(node)) return;
    this.options.logger.warn({ peer: node, why }, 'cluster node gone');
    this.emit({ node, up: false });
  }

  private emit(change: MembershipChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.options.logger.error(
          { err: (err as Error).message, peer: change.node },
          'membership listener failed',
        );
      }
    }
  }
}

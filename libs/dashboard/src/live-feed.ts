import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { BROKER_LOGGER } from '#broker/gateway';
import { type Logger } from 'pino';
import { SnapshotSource } from './snapshot-source.js';

/** Feeds open at once, across every admin: each costs a write per tick. */
export const MAX_WATCHERS = 8;
/** How often the feed aggregates and sends. */
export const TICK_MS = 1000;

/** One open feed: a page's response stream. */
export interface Watcher {
  /** Writes one server-sent event; false when the watcher is too far behind and was dropped. */
  send(frame: string): boolean;
  /** Ends the stream (the page reconnects). */
  end(): void;
}

/**
 * The dashboard's live feed: while at least one page watches, a snapshot is taken once a TICK_MS,
 * serialized once and written to every watcher as a server-sent event; with nobody watching there
 * is no timer and no bus subscription. A tick still running when the next is due skips that one.
 */
@Injectable()
export class LiveFeed implements OnApplicationShutdown {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private lastFrame: string | null = null;

  constructor(
    private readonly source: SnapshotSource,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** Whether MAX_WATCHERS already watch (a new one is then refused). */
  get full(): boolean {
    return this.watchers.size >= MAX_WATCHERS;
  }

  /** Adds a watcher (the caller checked `full`), who gets the latest snapshot at once; returns its leave. */
  join(watcher: Watcher): () => void {
    this.watchers.add(watcher);
    if (this.timer === null) {
      this.source.watch();
      this.timer = setInterval(() => void this.tick(), TICK_MS);
      this.timer.unref();
      void this.tick();
    } else if (this.lastFrame !== null && !watcher.send(this.lastFrame)) {
      this.watchers.delete(watcher);
    }
    return () => this.leave(watcher);
  }

  onApplicationShutdown(): void {
    for (const watcher of this.watchers) watcher.end();
    this.watchers.clear();
    this.stop();
  }

  private leave(watcher: Watcher): void {
    if (this.watchers.delete(watcher) && this.watchers.size === 0) this.stop();
  }

  private stop(): void {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    this.lastFrame = null;
    this.source.unwatch();
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const snapshot = await this.source.take();
      if (this.timer === null) return;
      const frame = `event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`;
      this.lastFrame = frame;
      for (const watcher of this.watchers) {
        if (!watcher.send(frame)) this.leave(watcher);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'dashboard feed: snapshot failed');
    } finally {
      this.ticking = false;
    }
  }
}

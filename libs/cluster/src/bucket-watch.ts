import { type KV, type KvWatchEntry, KvWatchInclude } from '@nats-io/kv';
import { type QueuedIterator } from '@nats-io/nats-core';
import { type Logger } from 'pino';

export interface BucketWatchOptions {
  readonly log: Logger;
  /** Names the bucket in log lines. */
  readonly what: string;
  /** How long after a failed or ended watch the next one starts. */
  readonly retryMs: number;
  /** The longest `loaded` waits for the bucket's current entries. */
  readonly loadTimeoutMs: number;
  /** Only the changes from now on, not the entries the bucket holds (`loaded` resolves at once). */
  readonly updatesOnly?: boolean;
}

export interface BucketWatch {
  /** Resolves once the entries the bucket held at the start were seen (or after the load timeout). */
  readonly loaded: Promise<void>;
  /** Watches anew from the bucket's current entries (after a NATS reconnect, say): nothing missed stays missed. */
  restart(): void;
  stop(): void;
}

/**
 * A watch of a KV bucket that keeps watching: every entry (the current ones first, then each change) goes
 * to `onEntry`, which must be idempotent, as a restarted watch delivers the current entries again. A watch
 * that ends or fails is started again after `retryMs`; `restart` replaces it at once, so a watch that a
 * NATS server restart left waiting for its consumer to be recreated does not leave the node blind.
 */
export async function watchBucket(
  kv: KV,
  onEntry: (entry: KvWatchEntry) => void,
  options: BucketWatchOptions,
): Promise<BucketWatch> {
  let generation = 0;
  let current: QueuedIterator<KvWatchEntry> | null = null;
  let stopped = false;
  let markLoaded: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));

  const retry = (): void => {
    if (stopped) return;
    setTimeout(() => void open().catch(() => retry()), options.retryMs).unref();
  };
  const open = async (): Promise<void> => {
    const mine = ++generation;
    const watcher = await kv.watch(
      options.updatesOnly === true ? { include: KvWatchInclude.UpdatesOnly } : {},
    );
    if (mine !== generation || stopped) {
      watcher.stop();
      return;
    }
    current = watcher;
    void (async () => {
      for await (const entry of watcher) {
        if (mine !== generation) break;
        onEntry(entry);
        // The replay of what the bucket held ends with the entry that has nothing pending behind it.
        if (entry.delta === 0) markLoaded();
      }
    })().then(
      () => {
        if (mine === generation) retry();
      },
      (err: unknown) => {
        options.log.warn({ err: (err as Error).message, bucket: options.what }, 'bucket watch failed');
        if (mine === generation) retry();
      },
    );
  };

  if (options.updatesOnly === true || (await kv.status()).values === 0) markLoaded();
  await open();
  setTimeout(markLoaded, options.loadTimeoutMs).unref();
  return {
    loaded,
    restart: () => {
      if (stopped) return;
      current?.stop();
      void open().catch(() => retry());
    },
    stop: () => {
      stopped = true;
      generation++;
      current?.stop();
    },
  };
}

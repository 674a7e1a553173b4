import { setTimeout as sleep } from 'node:timers/promises';
import { type StreamInfo } from '@nats-io/jetstream';

/**
 * How long a starting node keeps trying to make or find a bucket or stream and to see it led. A NATS
 * cluster that has just started answers 503, "no suitable peers" or nothing until it has elected its
 * leaders; a replicated stream's creation can time out on a busy server; and a stream just made answers
 * "stream not found" to a read until its own leader is elected.
 */
const READY_WITHIN_MS = 30_000;
const RETRY_MS = 250;

/**
 * Makes a JetStream bucket or stream with `create`, or, when that fails (made earlier with other limits,
 * by another version of a node), takes the one there with `open`; then waits until `ready` says it can
 * be read and written. Tries again until `withinMs` has passed; if nothing was ever made or found, the
 * reason it could not be created is the one worth reading.
 */
export async function createOrOpen<T>(
  what: string,
  create: () => Promise<T>,
  open: () => Promise<T>,
  ready: (made: T) => Promise<boolean>,
  withinMs = READY_WITHIN_MS,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  let made: { value: T } | null = null;
  let reason: Error = new Error('no leader elected');
  for (;;) {
    if (made === null) made = await attempt(create, open, (err) => (reason = err));
    if (made !== null && (await ready(made.value).catch(() => false))) return made.value;
    if (Date.now() >= deadline) {
      const why = made === null ? 'cannot be created' : 'has no leader';
      throw new Error(`JetStream ${what} ${why}: ${reason.message}`, { cause: reason });
    }
    await sleep(RETRY_MS);
  }
}

/** Whether a stream answers through its leader: one on a single server (no cluster) leads itself. */
export function led(info: StreamInfo): boolean {
  return info.cluster === undefined || Boolean(info.cluster.leader);
}

async function attempt<T>(
  create: () => Promise<T>,
  open: () => Promise<T>,
  failed: (err: Error) => void,
): Promise<{ value: T } | null> {
  try {
    return { value: await create() };
  } catch (err) {
    failed(err as Error);
  }
  try {
    return { value: await open() };
  } catch {
    // Not there either: tried again, or the create's reason is reported.
    return null;
  }
}

import { type Principal } from '#broker/handshake';

// setTimeout's longest delay; a later expiry is re-armed from there.
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The connections whose credentials expire in the same second, and the one timer they share. */
interface Bucket {
  readonly due: Set<() => void>;
  timer: NodeJS.Timeout | null;
}

/**
 * By expiry second. Tokens of one issuer mostly expire in the same seconds; one timer per second,
 * instead of one per connection, spares each handshake a timer list of its own (Node groups timers
 * by duration, and a per-connection remainder in milliseconds is nearly always a new duration).
 */
const buckets = new Map<number, Bucket>();

/** Shared, not an arrow made per call: that would share the call's context and keep `expired` alive. */
const NOTHING_TO_CANCEL = (): void => undefined;

/**
 * Calls `expired` when the principal's credential expires (its `exp` claim, seconds since the epoch,
 * which JWTs and expiring stored tokens both carry), so a connection never outlives its credential.
 * A fractional `exp` fires at the end of its second, never before it. Returns the function that
 * cancels it; a principal without `exp` schedules nothing.
 */
export function onCredentialExpiry(principal: Principal | null, expired: () => void): () => void {
  const exp = principal?.claims['exp'];
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return NOTHING_TO_CANCEL;
  const second = Math.ceil(exp);
  if (second * 1000 <= Date.now()) {
    expired();
    return NOTHING_TO_CANCEL;
  }
  // A wrapper of its own, so that the same callback registered twice is cancelled once per registration.
  const entry = (): void => expired();
  let registered = buckets.get(second);
  if (registered === undefined) {
    registered = { due: new Set([entry]), timer: null };
    buckets.set(second, registered);
    // Armed with the entry already in: should the second pass meanwhile, arming fires it at once.
    arm(second, registered);
  } else {
    registered.due.add(entry);
  }
  const bucket = registered;
  return () => {
    bucket.due.delete(entry);
    if (bucket.due.size === 0 && buckets.get(second) === bucket) {
      if (bucket.timer !== null) clearTimeout(bucket.timer);
      buckets.delete(second);
    }
  };
}

function arm(second: number, bucket: Bucket): void {
  const left = second * 1000 - Date.now();
  if (left <= 0) {
    buckets.delete(second);
    for (const expired of bucket.due) expired();
    return;
  }
  bucket.timer = setTimeout(() => arm(second, bucket), Math.min(left, MAX_DELAY_MS));
  bucket.timer.unref();
}

import { randomBytes } from 'node:crypto';

let lastMs = Number.NEGATIVE_INFINITY;
/** lastMs in base 36: the text is kept for its millisecond, as timestamp() keeps its own. */
let lastMsText = '';
let sequence = 0;

const RANDOM_BYTES_PER_ID = 6;
const IDS_PER_POOL = 1024;
let randomPool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * Six random bytes as hex, drawn from a pool refilled 1024 ids at a time: one randomBytes call per
 * id was an eighth of the OCPP call path's CPU (each row of a meter value gets an id). Node's own
 * randomUUID keeps a cache like this one.
 */
function randomSuffix(): string {
  if (poolOffset + RANDOM_BYTES_PER_ID > randomPool.length) {
    randomPool = randomBytes(RANDOM_BYTES_PER_ID * IDS_PER_POOL);
    poolOffset = 0;
  }
  const suffix = randomPool.toString('hex', poolOffset, poolOffset + RANDOM_BYTES_PER_ID);
  poolOffset += RANDOM_BYTES_PER_ID;
  return suffix;
}

/**
 * Time-ordered ids: ms timestamp, a per-process sequence within the same ms (so records written in
 * one ms still list in write order), then randomness against collisions between nodes.
 */
export function newId(now: Date = new Date()): string {
  const ms = Math.max(now.getTime(), lastMs);
  if (ms === lastMs) {
    sequence += 1;
  } else {
    sequence = 0;
    lastMs = ms;
    lastMsText = ms.toString(36).padStart(9, '0');
  }
  return lastMsText + sequence.toString(36).padStart(4, '0') + randomSuffix();
}

let formattedMs = Number.NaN;
let formatted = '';

/**
 * ISO-8601 UTC with milliseconds: fixed width, so text order is time order in both backends. The
 * current time's text is kept for its millisecond: the OCPP path stamps every call (a Heartbeat's
 * last-seen time), thousands of them per second.
 */
export function timestamp(now?: Date): string {
  if (now !== undefined) return now.toISOString();
  const ms = Date.now();
  if (ms !== formattedMs) {
    formatted = new Date(ms).toISOString();
    formattedMs = ms;
  }
  return formatted;
}

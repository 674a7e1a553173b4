import { randomBytes } from 'node:crypto';

let lastMs = Number.NEGATIVE_INFINITY;
/** lastMs in base 36: the text is kept for its millisecond, as timestamp() keeps its own. */
let lastMsText = '';
let sequence = 0;

const RANDOM_BYTES_PER_ID = 6;
const IDS_PER_POOL = 1024;
/** The pool's random bytes as hex, two characters a byte. */
let randomHex = '';
let hexOffset = 0;

/**
 * Six random bytes as hex, cut from a pool refilled 1024 ids at a time: one randomBytes call per id
 * was an eighth of the OCPP call path's CPU (each row of a meter value gets an id). The pool is turned
 * into hex once per refill, and each id takes a slice of it: a Buffer.toString per id (a call into
 * C++) took about as long as the rest of newId. V8 copies a slice this short (under 13 characters),
 * so an id never keeps its pool's text alive. Node's own randomUUID keeps a cache like this one.
 */
function randomSuffix(): string {
  const length = RANDOM_BYTES_PER_ID * 2;
  if (hexOffset + length > randomHex.length) {
    randomHex = randomBytes(RANDOM_BYTES_PER_ID * IDS_PER_POOL).toString('hex');
    hexOffset = 0;
  }
  const suffix = randomHex.slice(hexOffset, hexOffset + length);
  hexOffset += length;
  return suffix;
}

/**
 * Time-ordered ids: ms timestamp, a per-process sequence within the same ms (so records written in
 * one ms still list in write order), then randomness against collisions between nodes. Without a
 * time, the clock's: Date.now(), no Date made per id.
 */
export function newId(now?: Date): string {
  const ms = Math.max(now === undefined ? Date.now() : now.getTime(), lastMs);
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

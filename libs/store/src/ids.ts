import { randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * Time-ordered ids: ms timestamp, a per-process sequence within the same ms (so records written in
 * one ms still list in write order), then randomness against collisions between nodes.
 */
export function newId(now: Date = new Date()): string {
  const ms = Math.max(now.getTime(), lastMs);
  sequence = ms === lastMs ? sequence + 1 : 0;
  lastMs = ms;
  return (
    ms.toString(36).padStart(9, '0') + sequence.toString(36).padStart(4, '0') + randomBytes(6).toString('hex')
  );
}

/** ISO-8601 UTC with milliseconds: fixed width, so text order is time order in both backends. */
export function timestamp(now: Date = new Date()): string {
  return now.toISOString();
}

import { randomUUID } from 'node:crypto';

/**
 * A random UUID (after `prefix`, ASCII) as a flat string, for ids that live as long as a connection or
 * a session. Node's randomUUID concatenates its string from 20 pieces, and V8 keeps such a string as a
 * tree of ConsString nodes, about 490 bytes, until it dies; the latin1 round trip copies it into one
 * sequential string (56 bytes) and the tree becomes garbage at once.
 */
export function flatUuid(prefix = ''): string {
  return Buffer.from(prefix + randomUUID(), 'latin1').toString('latin1');
}

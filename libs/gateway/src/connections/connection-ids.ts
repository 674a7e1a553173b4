import { randomBytes } from 'node:crypto';

/** This process's prefix: ids stay distinct across restarts and across the nodes of a cluster. */
const BOOT = randomBytes(6).toString('base64url');
let issued = 0;

/**
 * The id of a new connection: this process's random prefix and a counter. Ids name connections in
 * logs and in the admin API (which is authenticated); they grant nothing, so they need not be
 * unguessable, and a random UUID per connection was a measurable share of a handshake. Where an id
 * must not be guessed (an MQTT client id the broker assigns) flatUuid is used instead.
 */
export function nextConnectionId(): string {
  issued++;
  return `${BOOT}-${issued.toString(36)}`;
}

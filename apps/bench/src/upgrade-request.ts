import { createHash, randomBytes } from 'node:crypto';

/** RFC 6455 section 1.3: the GUID the server appends to the key before hashing. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface UpgradeTarget {
  readonly port: number;
  readonly path: string;
  /** Sent as the `token` query parameter; null leaves it out (to see the broker refuse). */
  readonly token: string | null;
  readonly origin: string;
  readonly subprotocol: string;
}

/** Where requests go: everything but the credential. */
export type ServerTarget = Omit<UpgradeTarget, 'token'>;

/** One ready-to-write upgrade request and the only Sec-WebSocket-Accept value that answers it. */
export interface PreparedUpgrade {
  readonly request: Buffer;
  readonly expectedAccept: string;
}

export function acceptFor(key: string): string {
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}

export function upgradeRequest(target: UpgradeTarget, key: string): string {
  const query = target.token === null ? '' : `?token=${encodeURIComponent(target.token)}`;
  return (
    `GET ${target.path}${query} HTTP/1.1\r\n` +
    `Host: 127.0.0.1:${target.port}\r\n` +
    'Upgrade: websocket\r\n' +
    'Connection: Upgrade\r\n' +
    `Sec-WebSocket-Key: ${key}\r\n` +
    'Sec-WebSocket-Version: 13\r\n' +
    `Sec-WebSocket-Protocol: ${target.subprotocol}\r\n` +
    `Origin: ${target.origin}\r\n` +
    '\r\n'
  );
}

/**
 * One request per token, each with its own random 16-byte key, built before the run: hashing and
 * encoding per connection would spend the load generator's CPU, which it shares with the server.
 */
export function prepareUpgrades(target: ServerTarget, tokens: readonly string[]): PreparedUpgrade[] {
  return tokens.map((token) => {
    const key = randomBytes(16).toString('base64');
    return {
      request: Buffer.from(upgradeRequest({ ...target, token }, key), 'latin1'),
      expectedAccept: acceptFor(key),
    };
  });
}

/** A masked client close frame (code 1000), as RFC 6455 section 5.3 requires of clients. */
export function clientCloseFrame(): Buffer {
  const mask = randomBytes(4);
  const payload = Buffer.from([0x03, 0xe8]);
  const masked = payload.map((byte, i) => byte ^ (mask[i % 4] as number));
  return Buffer.concat([Buffer.from([0x88, 0x80 | payload.length]), mask, masked]);
}

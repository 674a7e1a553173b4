import { reject } from './problems.js';
import { type HandshakeRequest, type ParsedRequest, type Reject } from './types.js';
import { isValidHost } from './valid-host.js';
import { isValidWebSocketKey } from './validate-key.js';

/** An HTTP/1.1 upgrade's own validity (RFC 6455 section 4.2.1): version, method, Host, Upgrade, Connection, body, key. */
export function upgradeProblem(
  raw: HandshakeRequest,
  req: ParsedRequest,
  upgrade: readonly string[],
  wantsUpgrade: boolean,
): Reject | null {
  if (raw.httpVersion !== '1.1') {
    return reject(
      400,
      'HTTP/1.1 required',
      `A WebSocket upgrade needs HTTP/1.1, got HTTP/${raw.httpVersion}.`,
    );
  }
  if (raw.method !== 'GET') {
    return reject(405, 'Method not allowed', 'A WebSocket upgrade must be a GET request.', null, {
      Allow: 'GET',
    });
  }
  const host = hostProblem(req);
  if (host !== null) return host;
  if (upgrade.length !== 1 || (upgrade[0] as string).trim().toLowerCase() !== 'websocket') {
    return reject(400, 'Bad Upgrade header', 'The Upgrade header must be "websocket".');
  }
  if (!wantsUpgrade) {
    return reject(400, 'Bad Connection header', 'The Connection header must include the "upgrade" token.');
  }
  if (hasBody(req)) {
    return reject(400, 'Unexpected request body', 'A WebSocket upgrade request must not carry a body.');
  }
  const keys = req.values('sec-websocket-key');
  if (keys.length !== 1 || !isValidWebSocketKey((keys[0] as string).trim())) {
    return reject(
      400,
      'Bad Sec-WebSocket-Key',
      'Sec-WebSocket-Key must appear once and be the base64 encoding of 16 bytes.',
    );
  }
  return null;
}

/**
 * An HTTP/2 extended CONNECT's own validity (RFC 8441 section 4): CONNECT with `:protocol`
 * websocket and an `:authority` (as Host). No Upgrade, Connection or Sec-WebSocket-Key: HTTP/2 has
 * none of them, and its stream, not a 101, is the WebSocket.
 */
export function extendedConnectProblem(raw: HandshakeRequest, req: ParsedRequest): Reject | null {
  if (raw.method !== 'CONNECT') {
    return reject(
      405,
      'Method not allowed',
      'A WebSocket over HTTP/2 is an extended CONNECT (RFC 8441).',
      null,
      {
        Allow: 'CONNECT',
      },
    );
  }
  if (raw.protocol?.toLowerCase() !== 'websocket') {
    return reject(
      400,
      'Bad :protocol',
      'An extended CONNECT to a WebSocket endpoint must carry :protocol websocket (RFC 8441).',
    );
  }
  return hostProblem(req);
}

/** Exactly one Host (HTTP/2's :authority), a host name or address with an optional port. */
function hostProblem(req: ParsedRequest): Reject | null {
  const hosts = req.values('host');
  if (hosts.length !== 1 || (hosts[0] as string).trim() === '') {
    return reject(400, 'Bad Host header', 'Exactly one non-empty Host header is required.');
  }
  if (!isValidHost((hosts[0] as string).trim())) {
    return reject(
      400,
      'Bad Host header',
      'The Host header must be a host name or address, with an optional port.',
    );
  }
  return null;
}

function hasBody(req: ParsedRequest): boolean {
  if (req.values('transfer-encoding').length > 0) return true;
  return req.values('content-length').some((v) => v.trim() !== '0');
}

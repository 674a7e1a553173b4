import { STATUS_CODES } from 'node:http';
import { type ServerHttp2Stream } from 'node:http2';
import { type Duplex } from 'node:stream';
import { type EndpointSpec, type Reject } from '#broker/handshake';

/** What Node's parser refused before any decision (a head too large or too slow, or garbage), as a rejection. */
export function parserRejection(
  err: NodeJS.ErrnoException,
  http: { readonly maxHeaderSize: number; readonly headersTimeoutMs: number },
): Reject {
  const [status, title, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large', `The request head exceeds ${http.maxHeaderSize} bytes.`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timeout', `The request head did not arrive within ${http.headersTimeoutMs} ms.`]
        : [400, 'Malformed HTTP request', 'The request could not be parsed.'];
  return { kind: 'reject', status, headers: {}, problem: { title, detail }, endpoint: null };
}

export function problemBody(reject: Reject): string {
  return JSON.stringify({ type: 'about:blank', status: reject.status, ...reject.problem });
}

/**
 * Writes a rejection straight onto an upgrade socket and closes it. Anything pipelined behind the
 * request stays unread: the socket is gone once the response is flushed.
 */
export function writeRejection(socket: Duplex, reject: Reject): void {
  const body = problemBody(reject);
  let head =
    `HTTP/1.1 ${reject.status} ${STATUS_CODES[reject.status] ?? 'Error'}\r\n` +
    `Connection: ${rejectionConnection(reject)}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries(reject.headers)) head += `${name}: ${value}\r\n`;
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}\r\n${body}`);
}

/**
 * A rejection of an HTTP/2 extended CONNECT: the stream's response, then its end (the connection and
 * its other streams stay). HTTP/2 forbids Connection and Upgrade: a 426 keeps only its version.
 */
export function respondRejection(stream: ServerHttp2Stream, reject: Reject): void {
  const body = problemBody(reject);
  const headers: Record<string, string | number> = {
    ':status': reject.status,
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
  };
  for (const [name, value] of Object.entries(reject.headers))
    if (!/^(connection|upgrade)$/i.test(name)) headers[name.toLowerCase()] = value;
  stream.respond(headers);
  stream.end(body);
}

/**
 * A rejection always closes; one that names a protocol to upgrade to (the 426's `Upgrade: websocket`)
 * also lists `Upgrade` in Connection, as RFC 9110 section 7.8 requires of whoever sends Upgrade.
 */
export function rejectionConnection(reject: Reject): string {
  return 'Upgrade' in reject.headers ? 'Upgrade, close' : 'close';
}

export function plainPage(endpoint: EndpointSpec, html: boolean): { type: string; body: string } {
  const detail =
    'This is a WebSocket endpoint, but the request arrived without the Upgrade and Connection headers. ' +
    'If you are using a WebSocket client, a proxy between you and the broker probably removed them: ' +
    'it must forward "Upgrade: websocket" and "Connection: Upgrade" over HTTP/1.1.';
  if (!html) {
    return {
      type: 'application/json',
      body: JSON.stringify({ endpoint: endpoint.path, subprotocols: endpoint.subprotocols, detail }),
    };
  }
  const list = endpoint.subprotocols.map((p) => `<li><code>${escapeHtml(p)}</code></li>`).join('');
  return {
    type: 'text/html; charset=utf-8',
    body:
      `<!doctype html><html><head><meta charset="utf-8"><title>WebSocket endpoint</title></head><body>` +
      `<h1>WebSocket endpoint <code>${escapeHtml(endpoint.path)}</code></h1>` +
      `<p>${escapeHtml(detail)}</p><p>Subprotocols spoken here:</p><ul>${list}</ul></body></html>`,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

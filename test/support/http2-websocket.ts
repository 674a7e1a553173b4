import { createHash } from 'node:crypto';
import { type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import { Duplex } from 'node:stream';
import WebSocket from 'ws';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Request headers that exist only in an HTTP/1.1 upgrade (RFC 8441 section 5 drops them). */
const HTTP1_ONLY = new Set(['host', 'upgrade', 'connection', 'sec-websocket-key']);

/**
 * ws's own client, over an extended CONNECT on an HTTP/2 session: ws writes its HTTP/1.1 upgrade
 * request into this tunnel, which sends it as CONNECT with :protocol websocket (RFC 8441), and
 * answers ws with the 101 an HTTP/1.1 server would have sent (or the refusal's status and body).
 * So the test client is ws itself, with its own subprotocol and permessage-deflate checks; only
 * the first exchange is translated.
 */
export function http2WebSocket(
  session: ClientHttp2Session,
  url: string,
  protocols?: string | string[],
  options: WebSocket.ClientOptions = {},
): WebSocket {
  return new WebSocket(url, protocols, {
    ...options,
    createConnection: () => new Http2Tunnel(session) as never,
  });
}

class Http2Tunnel extends Duplex {
  private stream: ClientHttp2Stream | null = null;

  constructor(private readonly session: ClientHttp2Session) {
    super({ allowHalfOpen: true });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.stream !== null) {
      this.stream.write(chunk, callback);
      return;
    }
    const [requestLine = '', ...lines] = chunk.toString('latin1').split('\r\n');
    const path = requestLine.split(' ')[1] ?? '/';
    const headers: OutgoingHttpHeaders = {
      ':method': 'CONNECT',
      ':protocol': 'websocket',
      ':path': path,
    };
    let key = '';
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'sec-websocket-key') key = value;
      if (name === 'host') headers[':authority'] = value;
      else if (!HTTP1_ONLY.has(name)) headers[name] = value;
    }
    const stream = this.session.request(headers);
    this.stream = stream;
    stream.once('response', (response) => {
      const status = Number(response[':status']);
      if (status === 200) {
        const accept = createHash('sha1')
          .update(key + GUID)
          .digest('base64');
        let head = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n`;
        for (const name of ['sec-websocket-protocol', 'sec-websocket-extensions'])
          if (response[name] !== undefined) head += `${name}: ${String(response[name])}\r\n`;
        this.push(`${head}\r\n`);
      } else {
        let head = `HTTP/1.1 ${status} Refused\r\nConnection: close\r\n`;
        for (const [name, value] of Object.entries(response))
          if (name[0] !== ':' && value !== undefined) head += `${name}: ${String(value)}\r\n`;
        this.push(`${head}\r\n`);
      }
      stream.on('data', (data: Buffer) => {
        if (!this.push(data)) stream.pause();
      });
      stream.once('end', () => this.push(null));
    });
    stream.once('close', () => this.destroy());
    stream.once('error', (err) => this.destroy(err));
    callback();
  }

  override _read(): void {
    this.stream?.resume();
  }

  override _final(callback: (err?: Error | null) => void): void {
    if (this.stream === null) return callback();
    this.stream.end(callback);
  }

  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    if (this.stream !== null && !this.stream.destroyed) this.stream.close();
    callback(err);
  }

  setNoDelay(): this {
    return this;
  }

  setTimeout(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }
}

import { constants, type ServerHttp2Stream } from 'node:http2';
import { Duplex } from 'node:stream';

/** Response headers a WebSocket over HTTP/2 keeps from ws's 101 head (RFC 8441 section 5). */
const KEPT = /^(sec-websocket-protocol|sec-websocket-extensions):\s*(.*)$/i;

/**
 * An HTTP/2 stream dressed as the socket `ws` expects, so one code path (ws's handleUpgrade, the
 * opener, WsConnection) serves WebSockets over HTTP/1.1 and over HTTP/2. ws writes its 101 head
 * first, in one write: that becomes the stream's 200 response, with the subprotocol and extension
 * ws agreed; every later write is frames on the stream. Closing ends the stream (END_STREAM), and
 * destroying it resets the stream, never the connection it shares with other streams.
 */
export class Http2WebSocketSocket extends Duplex {
  private responded = false;

  constructor(
    private readonly stream: ServerHttp2Stream,
    /** The client's address (a trusted proxy's report included), for whoever asks the socket. */
    readonly remoteAddress: string,
    /** TLS under the HTTP/2 connection. */
    readonly encrypted: boolean,
  ) {
    super({ allowHalfOpen: true, decodeStrings: true });
    stream.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) stream.pause();
    });
    stream.once('end', () => this.push(null));
    stream.once('error', (err: Error) => this.destroy(err));
    stream.once('close', () => this.destroy());
  }

  override _read(): void {
    this.stream.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.responded) {
      this.stream.write(chunk, callback);
      return;
    }
    this.responded = true;
    const headers: Record<string, string | number> = { ':status': 200 };
    for (const line of chunk.toString('latin1').split('\r\n')) {
      const kept = KEPT.exec(line);
      if (kept !== null) headers[(kept[1] as string).toLowerCase()] = kept[2] as string;
    }
    this.stream.respond(headers);
    callback();
  }

  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (err?: Error | null) => void,
  ): void {
    if (!this.responded) {
      const [head, ...rest] = chunks;
      this._write((head as { chunk: Buffer }).chunk, 'latin1', () => undefined);
      chunks = rest;
    }
    if (chunks.length === 0) return callback();
    this.stream.write(Buffer.concat(chunks.map((c) => c.chunk)), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.stream.end(callback);
  }

  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    if (!this.stream.destroyed)
      this.stream.close(err === null ? constants.NGHTTP2_CANCEL : constants.NGHTTP2_INTERNAL_ERROR);
    callback(err);
  }

  /** What ws asks of a TCP socket: Nagle is the HTTP/2 connection's, timeouts are the stream's. */
  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  setTimeout(ms: number, callback?: () => void): this {
    this.stream.setTimeout(ms, callback);
    return this;
  }
}

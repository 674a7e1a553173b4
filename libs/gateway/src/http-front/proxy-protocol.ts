import { type Server } from 'node:http';
import { isIP, type Socket } from 'node:net';
import { Server as TlsServer, type TLSSocket } from 'node:tls';
import {
  Command,
  IPv4ProxyAddress,
  IPv6ProxyAddress,
  V1ProxyProtocol,
  V2ProxyProtocol,
} from 'proxy-protocol-js';
import { tcpSocketUnder } from './node-internals.js';

/** A v1 header is one line of at most 107 bytes, CRLF included. */
const V1_PREFIX = Buffer.from('PROXY ');
const V1_MAX = 107;
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Addresses and the TLVs load balancers add (AWS, Azure, GCP put an id or two): more is not a header. */
const V2_MAX = 16 + 1024;

export interface ProxyProtocolOptions {
  /** Only these peers may send a header (the trusted proxies). */
  readonly trusts: (address: string) => boolean;
  /** How long the header may take to arrive (the head timeout). */
  readonly timeoutMs: number;
  /** A connection closed before any request was read: why, and from whom. */
  readonly refused: (reason: string, peer: string) => void;
}

type Framing =
  | { kind: 'none' }
  | { kind: 'more' }
  | { kind: 'bad'; reason: string }
  | { kind: 'header'; client: string | null; rest: Buffer };

/**
 * PROXY protocol v1 and v2 (HAProxy's `send-proxy`, cloud load balancers) on the HTTP listener,
 * before TLS where the broker has it:
 * each new connection is held until its first bytes say whether a header leads; the header's
 * source address becomes the socket's remote address, and Node's HTTP server gets the connection
 * only then, with the bytes after the header. A header from a peer that is not trusted, a malformed
 * or truncated one, or one that does not arrive in time closes the connection before anything is
 * served. A connection without a header is served as it is (its peer's own address). Framing is
 * written here (where a header ends); the parsing is proxy-protocol-js's.
 */
export function acceptProxyProtocol(server: Server, options: ProxyProtocolOptions): void {
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? '';
    let buffered = Buffer.alloc(0);
    const refuse = (reason: string) => {
      cleanup();
      options.refused(reason, peer);
      socket.destroy();
    };
    const timer = setTimeout(() => refuse('the PROXY header did not arrive in time'), options.timeoutMs);
    const onError = () => socket.destroy();
    const cleanup = () => {
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const framing = frame(buffered);
      if (framing.kind === 'more') return;
      if (framing.kind === 'bad') return refuse(framing.reason);
      if (framing.kind === 'header' && !options.trusts(peer))
        return refuse('a PROXY header from a peer that is not trusted');
      cleanup();
      socket.pause();
      if (framing.kind === 'header') {
        if (framing.client !== null) nameClient(socket, framing.client);
        if (framing.rest.length > 0) socket.unshift(framing.rest);
      } else {
        socket.unshift(buffered);
      }
      for (const listener of listeners) listener.call(server, socket);
      // TLS takes the bytes after the header from the paused socket itself (on its next tick): a
      // socket set flowing with no 'data' listener would drop them. HTTP's parser needs it flowing.
      if (!(server instanceof TlsServer)) socket.resume();
    };
    socket.on('error', onError);
    socket.on('data', onData);
  });
  // The TLS socket over a TCP one has its own remoteAddress (the peer's): it takes the header's too.
  if (server instanceof TlsServer) server.prependListener('secureConnection', inheritClient);
}

/** The client a PROXY header named, on the TCP socket that carried it. */
function nameClient(socket: Socket, client: string): void {
  Object.defineProperty(socket, 'remoteAddress', { value: client, configurable: true });
}

/**
 * The TLS socket takes the address the header named for the TCP socket under it (a private link of
 * Node's, node-internals.ts); should it go, its spec and the e2e test of PROXY before TLS fail, and
 * the peer's address is used.
 */
function inheritClient(socket: TLSSocket): void {
  const parent = tcpSocketUnder(socket);
  if (parent !== undefined && Object.hasOwn(parent, 'remoteAddress') && parent.remoteAddress !== undefined)
    nameClient(socket, parent.remoteAddress);
}

/** Whether `buffered` starts with a whole header, part of one, something else, or a broken one. */
function frame(buffered: Buffer): Framing {
  if (startsLike(buffered, V1_PREFIX)) {
    if (buffered.length < V1_PREFIX.length) return { kind: 'more' };
    const end = buffered.indexOf('\r\n');
    if (end < 0)
      return buffered.length >= V1_MAX
        ? { kind: 'bad', reason: 'a PROXY v1 line over 107 bytes' }
        : { kind: 'more' };
    if (end + 2 > V1_MAX) return { kind: 'bad', reason: 'a PROXY v1 line over 107 bytes' };
    try {
      const line = buffered.subarray(0, end + 2).toString('latin1');
      const header = V1ProxyProtocol.parse(line);
      const client = header.inetProtocol === 'UNKNOWN' ? null : header.source.ipAddress;
      if (client !== null && !v1Addresses(line))
        return { kind: 'bad', reason: 'a PROXY v1 header without valid addresses and ports' };
      return { kind: 'header', client, rest: buffered.subarray(end + 2) };
    } catch {
      return { kind: 'bad', reason: 'a malformed PROXY v1 header' };
    }
  }
  if (startsLike(buffered, V2_SIGNATURE)) {
    if (buffered.length < 16) return { kind: 'more' };
    const length = 16 + buffered.readUInt16BE(14);
    if (length > V2_MAX) return { kind: 'bad', reason: 'a PROXY v2 header over 1040 bytes' };
    if (buffered.length < length) return { kind: 'more' };
    try {
      const header = V2ProxyProtocol.parse(buffered.subarray(0, length));
      if (!v2Tlvs(buffered.subarray(0, length)))
        return { kind: 'bad', reason: 'a PROXY v2 header whose TLVs do not fit it' };
      return {
        kind: 'header',
        client: header.command === Command.LOCAL ? null : source(header),
        rest: buffered.subarray(length),
      };
    } catch {
      return { kind: 'bad', reason: 'a malformed PROXY v2 header' };
    }
  }
  return { kind: 'none' };
}

/** A decimal port as the PROXY protocol writes it: 0 to 65535, no leading zero. */
const PORT = /^(0|[1-9]\d{0,4})$/;

/**
 * Whether a v1 TCP4/TCP6 line names two addresses of its family and two ports (the specification's
 * section 2.1); proxy-protocol-js takes any address and any number.
 */
function v1Addresses(line: string): boolean {
  const [, family, from, to, fromPort, toPort] = line.trimEnd().split(' ');
  const version = family === 'TCP4' ? 4 : family === 'TCP6' ? 6 : 0;
  return (
    version !== 0 &&
    isIP(from ?? '') === version &&
    isIP(to ?? '') === version &&
    [fromPort, toPort].every((port) => PORT.test(port ?? '') && Number(port) <= 65535)
  );
}

/** Bytes of the address block for each v2 address family (the high nibble of byte 13). */
const V2_ADDRESS_BYTES: Readonly<Record<number, number>> = { 0: 0, 1: 12, 2: 36, 3: 216 };

/**
 * Whether what follows a v2 header's addresses is whole TLVs (type, 16-bit length, value), each ending
 * within the header, as the specification's section 2.2.7 lays them out; proxy-protocol-js keeps the
 * bytes unread.
 */
function v2Tlvs(header: Buffer): boolean {
  const addressBytes = V2_ADDRESS_BYTES[(header[13] ?? 0) >> 4];
  if (addressBytes === undefined) return false;
  let at = 16 + addressBytes;
  if (at > header.length) return false;
  while (at < header.length) {
    if (at + 3 > header.length) return false;
    at += 3 + header.readUInt16BE(at + 1);
  }
  return at === header.length;
}

/** True while `buffered` is a prefix of `signature` or starts with all of it. */
function startsLike(buffered: Buffer, signature: Buffer): boolean {
  const n = Math.min(buffered.length, signature.length);
  return buffered.subarray(0, n).equals(signature.subarray(0, n));
}

/** The source of a v2 PROXY command; null for families without an address (UNIX, UNSPEC). */
function source(header: V2ProxyProtocol): string | null {
  const address = header.proxyAddress;
  if (address instanceof IPv4ProxyAddress) return address.sourceAddress.address.join('.');
  if (address instanceof IPv6ProxyAddress) {
    const bytes = address.sourceAddress.address;
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
    // The URL parser writes an IPv6 address in its canonical, compressed form.
    return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
  }
  return null;
}

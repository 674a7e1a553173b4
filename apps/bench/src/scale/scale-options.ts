import { integer, parseFlags, seconds, UsageError } from '../cli-options.js';

export const SCALE_USAGE = `Usage: node dist/apps/bench/src/main.js scale [options]

Many idle connections on one node: per server (the broker, then Mosquitto as the memory
reference), a preflight, then the handshake latency of new MQTT-over-WebSocket clients and the
publish-to-receive latency of an active MQTT pair (and, on the broker, a chat round trip) with the
server idle; then --connections idle connections from generator processes (raw sockets, each bound
to one of --addresses source addresses 127.0.a.b, so no address runs out of ephemeral ports), the
RSS per connection, and the same latencies again with that population open. Against the broker the
population is half MQTT, half chat.v1 (--mix half) or all MQTT (--mix mqtt); against Mosquitto all
MQTT. The broker runs without WebSocket pings (pingIntervalMs 0): the references send none.

Every process holds at most its RLIMIT_NOFILE of sockets: the server needs --connections + 500; a
generator process holds at most ${15_000} of them.

  --connections <n>  idle connections to open (default 100000)
  --addresses <n>    source addresses to cycle over (default connections / 500, at least 2)
  --mix <half|mqtt>  the broker's population (default half)
  --servers <list>   comma-separated, of broker and mosquitto (default broker,mosquitto)
  --samples <n>      latency samples per measurement (default 200)
  --settle <s>       wait before each RSS reading (default 3)
  --help             this text`;

export type ScaleServer = 'broker' | 'mosquitto';
export type Mix = 'half' | 'mqtt';

export interface ScaleOptions {
  readonly connections: number;
  readonly addresses: number;
  readonly mix: Mix;
  readonly servers: readonly ScaleServer[];
  readonly samples: number;
  readonly settleMs: number;
}

/** Sockets per generator process: well below the 20000 RLIMIT_NOFILE a process gets here. */
export const SOCKETS_PER_GENERATOR = 15_000;
/**
 * Connections per source address the default aims at. An address has about 28000 ephemeral ports,
 * but the kernel's search for a free one slows as an address fills: 18000 connections opened in 19 s
 * from 2 addresses and in 4 s from 36.
 */
const CONNECTIONS_PER_ADDRESS = 500;
/** Descriptors the server needs beyond the idle population: probes, listeners, files. */
export const FD_HEADROOM = 500;

/** Returns null when --help was asked for. */
export function parseScaleOptions(argv: readonly string[]): ScaleOptions | null {
  const values = parseFlags(argv, {
    connections: '100000',
    addresses: '',
    mix: 'half',
    servers: 'broker,mosquitto',
    samples: '200',
    settle: '3',
  });
  if (values === null) return null;
  const connections = integer('--connections', values.connections, 2, 1_000_000);
  if (values.mix !== 'half' && values.mix !== 'mqtt')
    throw new UsageError(`--mix: expected half or mqtt, got "${values.mix}"`);
  const servers = values.servers.split(',').map((s) => s.trim());
  for (const s of servers)
    if (s !== 'broker' && s !== 'mosquitto')
      throw new UsageError(`--servers: expected broker and/or mosquitto, got "${s}"`);
  return {
    connections,
    addresses:
      values.addresses === ''
        ? defaultAddresses(connections)
        : integer('--addresses', values.addresses, 1, 254 * 254),
    mix: values.mix,
    servers: servers as ScaleServer[],
    samples: integer('--samples', values.samples, 10, 100_000),
    settleMs: seconds('--settle', values.settle, 0) * 1000,
  };
}

export function defaultAddresses(connections: number): number {
  return Math.max(2, Math.ceil(connections / CONNECTIONS_PER_ADDRESS));
}

/**
 * The source address of connection `index`, cycling over `count` addresses 127.0.1.1, 127.0.1.2, ...
 * 127.0.1.254, 127.0.2.1, ...: never 127.0.0.1, which the latency probes use.
 */
export function sourceAddress(index: number, count: number): string {
  const slot = index % count;
  return `127.0.${1 + Math.floor(slot / 254)}.${1 + (slot % 254)}`;
}

/** The population's protocol per connection: every other one chat with --mix half. */
export function kindOf(index: number, mix: Mix): 'mqtt' | 'chat' {
  return mix === 'mqtt' || index % 2 === 0 ? 'mqtt' : 'chat';
}

/** [start, count] of each generator process: as few as hold `connections` at SOCKETS_PER_GENERATOR each. */
export function generatorShares(connections: number): [number, number][] {
  const processes = Math.ceil(connections / SOCKETS_PER_GENERATOR);
  const shares: [number, number][] = [];
  let start = 0;
  for (let i = 0; i < processes; i++) {
    const count = Math.floor((connections * (i + 1)) / processes) - start;
    shares.push([start, count]);
    start += count;
  }
  return shares;
}

import { type Socket } from 'node:net';
import type WebSocket from 'ws';
import { brokerBaseConfig, writeBrokerConfig } from '../broker-config.js';
import { freePort, killChildrenOnExit, startBrokerServer, type ServerProcess } from '../child-servers.js';
import { integer, parseFlags } from '../cli-options.js';
import {
  connectionInit,
  FANOUT_SUBSCRIPTION,
  FANOUT_TOPIC,
  PUBLISH_MUTATION,
  subscribeMessage,
} from '../graphql/transport-ws-load.js';
import { MessageInbox, openClient } from '../load/ws-client.js';
import { processCpuMs } from '../process-cpu.js';
import { processRssKiB } from '../protocol-bench/process-memory.js';

export const DEFLATE_USAGE = `Usage: node dist/apps/bench/src/main.js deflate [options]

permessage-deflate on a GraphQL endpoint, off and on (endpoints[].perMessageDeflate), one broker
process each: resident memory per idle connection that negotiated it, and the broker's CPU and
the bytes on the wire per delivered subscription event of --payload bytes.

  --connections <n>  idle graphql-transport-ws connections for the memory reading (default 1000)
  --subscribers <n>  subscribers receiving every event (default 100)
  --events <n>       events published (default 1000)
  --payload <b>      event payload bytes: JSON records with varied numbers and words (default 2048)
  --settle <s>       wait before each memory reading (default 3)
  --help             this text`;

const TIMEOUT_MS = 10_000;
/**
 * Distinct event payloads, published in turn: a repeat lies this many events back, far past the
 * 32 KiB window a compressor can refer to, so context takeover finds no copy of a whole event (one
 * payload for every event compressed each to a few dozen bytes and flattered the setting).
 */
const DISTINCT_PAYLOADS = 1024;

interface Reading {
  readonly setting: string;
  readonly bytesPerIdleConnection: number;
  readonly cpuUsPerMessage: number;
  readonly wireBytesPerMessage: number;
  /** Measured events a subscriber got out of order, twice, or with a payload not as published. */
  readonly errors: number;
}

export async function runDeflateBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, {
    connections: '1000',
    subscribers: '100',
    events: '1000',
    payload: '2048',
    settle: '3',
  });
  if (values === null) {
    console.log(DEFLATE_USAGE);
    return;
  }
  const settings = {
    connections: integer('--connections', values.connections, 1, 20_000),
    subscribers: integer('--subscribers', values.subscribers, 1, 5_000),
    events: integer('--events', values.events, 1, 100_000),
    payload: integer('--payload', values.payload, 1, 60_000),
    settleMs: integer('--settle', values.settle, 0, 60) * 1000,
  };
  killChildrenOnExit();
  const readings: Reading[] = [];
  for (const [setting, deflate] of [
    ['off', false],
    ['on (threshold 1024, memLevel 8)', { threshold: 1024, memLevel: 8 }],
    [
      'on (no context takeover, window 10, memLevel 4)',
      {
        threshold: 1024,
        memLevel: 4,
        serverNoContextTakeover: true,
        serverMaxWindowBits: 10,
      },
    ],
  ] as const) {
    const port = await freePort();
    const config = {
      ...brokerBaseConfig(port),
      endpoints: [
        {
          path: '/graphql',
          subprotocols: ['graphql-transport-ws'],
          defaultModule: 'graphql-transport-ws',
          maxConnections: 100_000,
          perMessageDeflate: deflate,
        },
      ],
    };
    const server = await startBrokerServer(
      await writeBrokerConfig(config),
      port,
      {},
      `broker, deflate ${setting}`,
    );
    try {
      readings.push({ setting, ...(await measure(server, deflate !== false, settings)) });
    } finally {
      await server.stop();
    }
  }
  console.log(report(readings, settings));
  if (readings.some((r) => r.errors > 0)) process.exitCode = 1;
}

async function measure(
  server: ServerProcess,
  offered: boolean,
  settings: { connections: number; subscribers: number; events: number; payload: number; settleMs: number },
): Promise<Omit<Reading, 'setting'>> {
  const target = { port: server.port, path: '/graphql', subprotocol: 'graphql-transport-ws', deflate: true };
  const settle = () => new Promise((resolve) => setTimeout(resolve, settings.settleMs));
  await settle();
  const rssBefore = processRssKiB(server.pid);
  const idle: WebSocket[] = [];
  for (let i = 0; i < settings.connections; i++) idle.push(await acknowledged(target));
  await settle();
  const rssAfter = processRssKiB(server.pid);
  for (const ws of idle) ws.terminate();
  if (offered && idle[0]?.extensions === '') throw new Error('permessage-deflate was not negotiated');

  let received = 0;
  let measuring = false;
  let errors = 0;
  const payloads = Array.from({ length: Math.min(settings.events, DISTINCT_PAYLOADS) }, (_, i) =>
    jsonText(settings.payload, i + 1),
  );
  const eventText = (i: number): string => `${i}:${payloads[i % payloads.length] ?? ''}`;
  const subscribers: WebSocket[] = [];
  for (let i = 0; i < settings.subscribers; i++) {
    const ws = await acknowledged(target);
    let next = 0;
    // Counted only when it is the next event, whole: a codec that garbles, drops or repeats fails the run.
    ws.on('message', (data: Buffer) => {
      if (!measuring) return void received++;
      const got = eventPayload(data);
      if (got === 'probe') return;
      if (got === eventText(next)) {
        next++;
        received++;
      } else errors++;
    });
    ws.send(subscribeMessage('s', FANOUT_SUBSCRIPTION));
    subscribers.push(ws);
  }
  const publisher = await acknowledged({ ...target, deflate: false });
  // Until a probe reaches every subscriber, their subscriptions are still starting.
  await waitUntil(async () => {
    const before = received;
    publisher.send(
      subscribeMessage(`probe${before}`, PUBLISH_MUTATION, { topic: FANOUT_TOPIC, payload: 'probe' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    return received - before >= settings.subscribers;
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const wireBefore = subscribers.reduce((sum, ws) => sum + socketOf(ws).bytesRead, 0);
  const cpuBefore = processCpuMs(server.pid) ?? 0;
  received = 0;
  measuring = true;
  for (let i = 0; i < settings.events; i++) {
    publisher.send(
      subscribeMessage(`e${i}`, PUBLISH_MUTATION, { topic: FANOUT_TOPIC, payload: eventText(i) }),
    );
    // A few events under way at a time: the cost measured is the broker's, not a backlog's.
    if (i % 10 === 9) await waitUntil(() => received >= (i + 1) * settings.subscribers);
  }
  await waitUntil(() => received >= settings.events * settings.subscribers);
  const cpuMs = (processCpuMs(server.pid) ?? 0) - cpuBefore;
  const wire = subscribers.reduce((sum, ws) => sum + socketOf(ws).bytesRead, 0) - wireBefore;
  for (const ws of [...subscribers, publisher]) ws.terminate();
  const delivered = settings.events * settings.subscribers;
  return {
    bytesPerIdleConnection: Math.round(((rssAfter - rssBefore) * 1024) / settings.connections),
    cpuUsPerMessage: (cpuMs * 1000) / delivered,
    wireBytesPerMessage: wire / delivered,
    errors,
  };
}

/** The payload of a graphql-transport-ws `next` for the fan-out subscription, if that is what `data` is. */
function eventPayload(data: Buffer): string | undefined {
  try {
    const message = JSON.parse(data.toString('utf8')) as {
      payload?: { data?: { topic?: { payload?: string } } };
    };
    return message.payload?.data?.topic?.payload;
  } catch {
    return undefined;
  }
}

async function acknowledged(target: Parameters<typeof openClient>[0]): Promise<WebSocket> {
  const ws = await openClient(target, TIMEOUT_MS);
  const inbox = new MessageInbox(ws);
  ws.send(connectionInit());
  const ack = JSON.parse(await inbox.next(TIMEOUT_MS, 'connection_ack')) as { type?: string };
  if (ack.type !== 'connection_ack') throw new Error(`expected connection_ack, got ${ack.type}`);
  // Later messages are counted by the caller's own listener.
  inbox.forEach(
    () => undefined,
    () => undefined,
  );
  return ws;
}

const WORDS = ['charger', 'status', 'available', 'meter', 'energy', 'session', 'connector', 'fault', 'price'];

/**
 * About `size` characters of JSON records with varied numbers and words, as GraphQL results look:
 * a run of one character would compress a hundredfold and flatter the setting.
 */
function jsonText(size: number, seed: number): string {
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const records: string[] = [];
  let length = 2;
  while (length < size) {
    const record = JSON.stringify({
      id: next() % 100000,
      kind: WORDS[next() % WORDS.length],
      value: (next() % 100000) / 100,
      at: `2026-11-27T${String(next() % 24).padStart(2, '0')}:${String(next() % 60).padStart(2, '0')}:00Z`,
    });
    records.push(record);
    length += record.length + 1;
  }
  return `[${records.join(',')}]`.slice(0, Math.max(size, 2));
}

function socketOf(ws: WebSocket): Socket {
  return (ws as unknown as { _socket: Socket })._socket;
}

async function waitUntil(done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS * 3;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('the run did not complete in time (messages lost or refused)');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function report(
  readings: readonly Reading[],
  settings: { connections: number; subscribers: number; events: number; payload: number },
): string {
  const off = readings[0] as Reading;
  const rows = readings.map(
    (r) =>
      `| ${r.setting} | ${r.bytesPerIdleConnection} | ${r.cpuUsPerMessage.toFixed(1)} (${(r.cpuUsPerMessage / off.cpuUsPerMessage).toFixed(2)}×) | ${Math.round(r.wireBytesPerMessage)} (${(r.wireBytesPerMessage / off.wireBytesPerMessage).toFixed(2)}×) | ${r.errors} |`,
  );
  return [
    '## permessage-deflate on a GraphQL endpoint',
    '',
    `${settings.connections} idle connections for memory; ${settings.subscribers} subscribers × ${settings.events} events of ${settings.payload} bytes for CPU and wire bytes; the clients offer permessage-deflate.`,
    '',
    '| endpoint perMessageDeflate | RSS bytes per idle connection | broker CPU µs per delivered event | wire bytes per delivered event | events wrong, repeated or out of order |',
    '| :--- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    'Each subscriber checks every event it gets is the next one published, its payload whole; an error makes the exit code 1.',
  ].join('\n');
}

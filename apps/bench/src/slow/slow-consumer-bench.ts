import { type Socket } from 'node:net';
import WebSocket from 'ws';
import { Bystander } from '../bystander.js';
import { startEveryModuleBroker } from '../broker-config.js';
import { type ServerProcess } from '../child-servers.js';
import { integer, parseFlags } from '../cli-options.js';
import { processRssKiB } from '../protocol-bench/process-memory.js';
import { summarizeLatencies, type LatencySummary } from '../stats.js';
import { session, subscriber, untilHeard } from './feed-clients.js';
import { FEEDS, type Feed } from './feeds.js';

export const SLOW_USAGE = `Usage: node dist/apps/bench/src/main.js slow [options]

Slow consumers (issue 27): one broker process with every module; per protocol, a publisher sends
--rate events a second of --payload bytes for --seconds to two subscribers, one reading and one that
stopped reading (its socket paused). Per protocol: what the reader got, what the broker shed for the
sleeper (its metric), whether the sleeper is still connected, the broker's RSS growth, and a chat
bystander's p99 against its idle p99.

  --seconds <n>  length of each protocol's flood (default 10)
  --rate <n>     events published per second (default 2000)
  --payload <b>  bytes per event (default 1024)
  --help         this text`;

/** How long what is under way may take to reach the reader once the flood stops. */
const TIMEOUT_MS = 10_000;
/** The target: the bystander's p99 during a flood within this multiple of its idle p99. */
const TARGET_RATIO = 2;

interface Row {
  readonly name: string;
  readonly published: number;
  readonly readerGot: number;
  readonly shed: number;
  readonly sleeperOpen: boolean;
  readonly rssGrowthMiB: number;
  readonly bystander: LatencySummary;
  readonly bystanderErrors: number;
}

export async function runSlowConsumerBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { seconds: '10', rate: '2000', payload: '1024' });
  if (values === null) {
    console.log(SLOW_USAGE);
    return;
  }
  const settings = {
    seconds: integer('--seconds', values.seconds, 1, 600),
    rate: integer('--rate', values.rate, 10, 100_000),
    payload: integer('--payload', values.payload, 1, 60_000),
  };
  const server = await startEveryModuleBroker();
  try {
    const idle = await Bystander.open(server.port);
    const idleRtts = await idle.measure(performance.now() + settings.seconds * 1000, 10);
    idle.close();
    const rows: Row[] = [];
    for (const feed of FEEDS) rows.push(await flood(server, feed, settings));
    console.log(report(summarizeLatencies(idleRtts.latencies), rows, settings));
    if (rows.some((r) => r.bystanderErrors > 0 || r.readerGot < r.published)) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

async function flood(
  server: ServerProcess,
  feed: Feed,
  settings: { seconds: number; rate: number; payload: number },
): Promise<Row> {
  const reader = await subscriber(server.port, feed, 'reader');
  const sleeper = await subscriber(server.port, feed, 'sleeper');
  let readerGot = 0;
  reader.on('message', (data: Buffer) => {
    readerGot += feed.events(data).length;
    const answer = feed.answer?.(data);
    if (answer) reader.send(answer);
  });
  const publisher = await session(server.port, feed, feed.setup);
  publisher.on('message', () => undefined);
  await untilHeard(publisher, feed, () => readerGot);
  (sleeper as unknown as { _socket: Socket })._socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  readerGot = 0;
  const shedBefore = await shed(server.port, feed);
  const rssBefore = processRssKiB(server.pid);
  let rssMax = rssBefore;
  const bystander = await Bystander.open(server.port);
  const until = performance.now() + settings.seconds * 1000;
  const payload = 'p'.repeat(settings.payload);
  const perTick = Math.max(1, Math.round(settings.rate / 100));
  const publishing = (async () => {
    let seq = 0;
    for (let tick = 0; performance.now() < until; tick++) {
      for (let i = 0; i < perTick; i++) publisher.send(feed.publish(seq++, payload));
      if (tick % 100 === 0) rssMax = Math.max(rssMax, processRssKiB(server.pid));
      // Ticks of 10 ms, kept to the clock so a slow tick is caught up.
      const next = until - settings.seconds * 1000 + (tick + 1) * 10;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
    return seq;
  })();
  const [rtts, published] = await Promise.all([bystander.measure(until, 10), publishing]);
  bystander.close();
  // What is under way reaches the reader.
  const settled = performance.now() + TIMEOUT_MS;
  while (readerGot < published && performance.now() < settled) await new Promise((r) => setTimeout(r, 50));
  rssMax = Math.max(rssMax, processRssKiB(server.pid));
  const row: Row = {
    name: feed.name,
    published,
    readerGot,
    shed: (await shed(server.port, feed)) - shedBefore,
    sleeperOpen: sleeper.readyState === WebSocket.OPEN,
    rssGrowthMiB: (rssMax - rssBefore) / 1024,
    bystander: summarizeLatencies(rtts.latencies),
    bystanderErrors: rtts.errors,
  };
  for (const ws of [reader, sleeper, publisher]) ws.terminate();
  return row;
}

async function shed(port: number, feed: Feed): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => feed.dropped.test(line))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

function report(
  idle: LatencySummary,
  rows: readonly Row[],
  settings: { seconds: number; rate: number; payload: number },
): string {
  const lines = [
    `Slow consumers: ${settings.rate} events/s of ${settings.payload} bytes for ${settings.seconds} s per protocol; bystander idle p99 ${idle.p99.toFixed(2)} ms.`,
    '',
    '| feed | published | reader got | shed for the sleeper | sleeper connected | broker RSS growth | bystander p99 | p99 / idle | verdict |',
    '| --- | --: | --: | --: | --- | --: | --: | --: | --- |',
  ];
  for (const r of rows) {
    const ratio = r.bystander.p99 / idle.p99;
    const problems = [
      r.readerGot < r.published ? `reader missed ${r.published - r.readerGot}` : null,
      r.bystanderErrors > 0 ? `${r.bystanderErrors} bystander errors` : null,
      r.shed === 0 ? 'nothing shed' : null,
    ].filter((p) => p !== null);
    const verdict = problems.length > 0 ? problems.join(', ') : ratio <= TARGET_RATIO ? 'met' : 'not met';
    lines.push(
      `| ${r.name} | ${r.published} | ${r.readerGot} | ${r.shed} | ${r.sleeperOpen ? 'yes' : 'no'} | ` +
        `${r.rssGrowthMiB.toFixed(1)} MiB | ${r.bystander.p99.toFixed(2)} ms | ${ratio.toFixed(2)}x | ${verdict} |`,
    );
  }
  lines.push(
    '',
    `Target: nothing lost for the reader, the sleeper's events shed and counted, the bystander's p99 within ${TARGET_RATIO}x idle.`,
  );
  return lines.join('\n');
}

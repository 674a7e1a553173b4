import type WebSocket from 'ws';
import { Bystander } from '../bystander.js';
import { startEveryModuleBroker } from '../broker-config.js';
import { integer, parseFlags } from '../cli-options.js';
import { openClient } from '../load/ws-client.js';
import { callFrame } from '../ocpp/ocpp-frames.js';
import { processRssKiB } from '../protocol-bench/process-memory.js';
import { PROBE_SEQ, session, subscriber, untilHeard } from '../slow/feed-clients.js';
import { FEEDS, type Feed } from '../slow/feeds.js';

export const SOAK_USAGE = `Usage: node dist/apps/bench/src/main.js soak [options]

Every protocol at once under steady load for --minutes (issue 27): one broker process; per
subscription feed (MQTT QoS 0 and 1, GraphQL, WAMP, chat) a publisher keeps --window events under
way to a reading subscriber (a new one as each arrives), ten OCPP charge points send MeterValues, each
one after the other, and a chat bystander times a round trip every 10 ms. Per feed: the delivered rate
in the first and the last minute (each event checked to be the next one published); the broker's RSS
after the first minute and at the end; errors.

  --minutes <n>  length of the run (default 10)
  --window <n>   events under way per feed (default 50)
  --help         this text`;

const PAYLOAD = 'q'.repeat(256);
/** Charge points in the OCPP lane, each with one call under way (OCPP-J allows no more). */
const CHARGE_POINTS = 10;
/** The targets: the last minute's rate at least this share of the first's, RSS at most this much higher. */
const RATE_FLOOR = 0.95;
const RSS_CEILING = 1.1;

interface Lane {
  readonly name: string;
  /** Events (or OCPP answers) per minute. */
  readonly perMinute: number[];
  errors: number;
}

export async function runSoakBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { minutes: '10', window: '50' });
  if (values === null) {
    console.log(SOAK_USAGE);
    return;
  }
  const minutes = integer('--minutes', values.minutes, 2, 120);
  const window = integer('--window', values.window, 1, 90);
  const server = await startEveryModuleBroker();
  let sampling: NodeJS.Timeout | undefined;
  try {
    const started = performance.now();
    const until = started + minutes * 60_000;
    const minute = () => Math.min(minutes - 1, Math.floor((performance.now() - started) / 60_000));
    const lanes = [...FEEDS.map((f) => lane(f.name, minutes)), lane('OCPP MeterValues', minutes)];
    const rss: number[] = [];
    sampling = setInterval(() => rss.push(processRssKiB(server.pid)), 10_000);
    const bystander = await Bystander.open(server.port);
    const [rtts] = await Promise.all([
      bystander.measure(until, 10),
      ...FEEDS.map((feed, i) => feedLoop(server.port, feed, window, until, minute, lanes[i] as Lane)),
      ...Array.from({ length: CHARGE_POINTS }, (_, i) =>
        ocppLoop(server.port, `soak-cp-${i}`, until, minute, lanes[FEEDS.length] as Lane),
      ),
    ]);
    clearInterval(sampling);
    bystander.close();
    const warm = rss[Math.min(rss.length - 1, 5)] ?? 0;
    const end = rss[rss.length - 1] ?? 0;
    console.log(report(lanes, minutes, window, { warm, end, max: Math.max(...rss) }, rtts.errors));
    if (lanes.some((l) => l.errors > 0) || rtts.errors > 0) process.exitCode = 1;
  } finally {
    clearInterval(sampling);
    await server.stop();
  }
}

function lane(name: string, minutes: number): Lane {
  return { name, perMinute: new Array<number>(minutes).fill(0), errors: 0 };
}

/** Keeps `window` events under way from a publisher to a reading subscriber until `until`. */
async function feedLoop(
  port: number,
  feed: Feed,
  window: number,
  until: number,
  minute: () => number,
  counts: Lane,
): Promise<void> {
  const reader = await subscriber(port, feed, `soak-${feed.name.replace(/\W/g, '')}`);
  const publisher = await session(port, feed, feed.setup);
  publisher.on('message', () => undefined);
  let got = 0;
  let measuring = false;
  let wake: (() => void) | null = null;
  reader.on('message', (data: Buffer) => {
    for (const seq of feed.events(data)) {
      if (!measuring) got++;
      else if (seq >= PROBE_SEQ) continue;
      // Each event once and in order: the next expected, or one lost, repeated or out of order.
      else if (seq !== got) {
        counts.errors++;
        got = Math.max(got, seq + 1);
      } else {
        got++;
        counts.perMinute[minute()] = (counts.perMinute[minute()] ?? 0) + 1;
      }
    }
    const answer = feed.answer?.(data);
    if (answer) reader.send(answer);
    wake?.();
  });
  for (const ws of [reader, publisher]) ws.once('close', () => counts.errors++);
  await untilHeard(publisher, feed, () => got);
  await new Promise((resolve) => setTimeout(resolve, 200));
  counts.perMinute.fill(0);
  got = 0;
  measuring = true;
  let seq = 0;
  while (performance.now() < until && counts.errors === 0) {
    while (seq - got < window) publisher.send(feed.publish(seq++, PAYLOAD));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });
  }
  if (seq - got > window) counts.errors++;
  for (const ws of [reader, publisher]) {
    ws.removeAllListeners('close');
    ws.terminate();
  }
}

/** A charge point sending MeterValues, each once the previous one was answered (OCPP-J's rule). */
async function ocppLoop(
  port: number,
  identity: string,
  until: number,
  minute: () => number,
  counts: Lane,
): Promise<void> {
  const ws: WebSocket = await openClient({ port, path: `/ocpp/${identity}`, subprotocol: 'ocpp1.6' }, 10_000);
  ws.once('close', () => counts.errors++);
  // A charge point boots before it reports (the central system refuses MeterValues until then).
  const booted = new Promise((resolve) => ws.once('message', resolve));
  ws.send(callFrame('boot', 'BootNotification', '', 0));
  await booted;
  const timestamp = new Date().toISOString();
  for (let seq = 0; performance.now() < until && counts.errors === 0; seq++) {
    const answered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      ws.once('message', (data: Buffer) => {
        clearTimeout(timer);
        resolve(data.toString().startsWith(`[3,"m${seq}"`));
      });
    });
    ws.send(callFrame(`m${seq}`, 'MeterValues', timestamp, seq));
    if (await answered) counts.perMinute[minute()] = (counts.perMinute[minute()] ?? 0) + 1;
    else counts.errors++;
  }
  ws.removeAllListeners('close');
  ws.terminate();
}

function report(
  lanes: readonly Lane[],
  minutes: number,
  window: number,
  rss: { warm: number; end: number; max: number },
  bystanderErrors: number,
): string {
  const lines = [
    `Soak: ${minutes} minutes, every protocol at once (${window} events under way per feed), bystander errors: ${bystanderErrors}.`,
    '',
    '| lane | first minute /s | last minute /s | last / first | errors | verdict |',
    '| --- | --: | --: | --: | --: | --- |',
  ];
  for (const l of lanes) {
    const first = (l.perMinute[0] ?? 0) / 60;
    const last = (l.perMinute[minutes - 1] ?? 0) / 60;
    const ratio = first === 0 ? 0 : last / first;
    const verdict = l.errors > 0 ? `${l.errors} errors` : ratio >= RATE_FLOOR ? 'met' : 'not met';
    lines.push(
      `| ${l.name} | ${first.toFixed(0)} | ${last.toFixed(0)} | ${ratio.toFixed(2)}x | ${l.errors} | ${verdict} |`,
    );
  }
  const growth = rss.warm === 0 ? 0 : rss.end / rss.warm;
  lines.push(
    '',
    `Broker RSS: ${(rss.warm / 1024).toFixed(0)} MiB after the first minute, ${(rss.end / 1024).toFixed(0)} MiB at the end ` +
      `(${growth.toFixed(2)}x; highest ${(rss.max / 1024).toFixed(0)} MiB): ${growth <= RSS_CEILING ? 'met' : 'not met'}.`,
    '',
    `Targets: each lane's last minute at least ${RATE_FLOOR}x its first, RSS at the end within ${RSS_CEILING}x of the first minute's, no error.`,
  );
  return lines.join('\n');
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { integer, parseFlags, seconds, UsageError } from '../cli-options.js';
import { killChildrenOnExit } from '../child-servers.js';
import { processCpuMs } from '../process-cpu.js';
import { checkFdLimit, childFdLimit, processFdLimit } from '../scale/fd-limit.js';
import { IdlePopulation } from '../scale/idle-population.js';
import { defaultAddresses } from '../scale/scale-options.js';
import { startScaleServer } from '../scale/scale-servers.js';

export const DASHBOARD_USAGE = `Usage: node dist/apps/bench/src/main.js dashboard [options]

What the dashboard's live feed costs the broker: the broker with --connections idle connections
(half MQTT, half chat.v1, as the scale mode opens them), its CPU time in --rounds pairs of windows
of the same run, each a window with no feed then one with --feeds feeds open (each reading every
snapshot); the cost is the difference. Also the page's bytes as the broker serves them (gzip -9).
With --watch trace, the watched windows run a trace instead (an MQTT topic-filter trace of '#',
read every second as the page reads it).

  --connections <n>  idle connections (default 10000)
  --feeds <n>        feeds open in the watched windows (default 1; the broker allows 8)
  --watch <what>     feed (default) or trace: what runs in the watched windows
  --window <s>       seconds per window (default 15)
  --rounds <n>       pairs of windows (default 4)
  --help             this text`;

const WEB_DIR = fileURLToPath(new URL('../../../../libs/dashboard/web/', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const progress = (text: string): void => console.error(`[dashboard] ${text}`);

/** An open feed, counting what it reads. */
interface Feed {
  events: number;
  bytes: number;
  readonly close: () => void;
}

export async function runDashboardBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, {
    connections: '10000',
    feeds: '1',
    window: '15',
    rounds: '4',
    watch: 'feed',
  });
  if (values === null) return console.log(DASHBOARD_USAGE);
  const connections = integer('--connections', values.connections, 2, 1_000_000);
  const feeds = integer('--feeds', values.feeds, 1, 8);
  const windowMs = seconds('--window', values.window, 1) * 1000;
  const rounds = integer('--rounds', values.rounds, 1, 100);
  if (values.watch !== 'feed' && values.watch !== 'trace') {
    throw new UsageError(`--watch must be feed or trace, not ${values.watch}`);
  }
  const tracing = values.watch === 'trace';
  const watching = tracing ? 'a trace' : `${feeds} feed(s)`;
  checkFdLimit(connections, childFdLimit(), 'A server started from here');
  killChildrenOnExit();
  const bundle = bundleBytes();
  const server = await startScaleServer('broker', connections);
  const { pid, port } = server.process;
  try {
    checkFdLimit(connections, processFdLimit(pid), `broker (pid ${pid})`);
    progress(`opening ${connections} idle connections`);
    const opened = await IdlePopulation.open(port, connections, defaultAddresses(connections), 'half');
    try {
      await sleep(3000);
      const cpu = (): number => processCpuMs(pid) ?? NaN;
      const rows: string[] = [];
      const costs: number[] = [];
      let events = 0;
      let bytes = 0;
      for (let round = 1; round <= rounds; round++) {
        progress(`round ${round} of ${rounds}: nothing watched, then ${watching}`);
        const idle = await window(cpu, windowMs);
        const open = tracing
          ? [await openTrace(port)]
          : await Promise.all(Array.from({ length: feeds }, () => openFeed(port)));
        await sleep(2000);
        const counted = open.map((f) => f.events);
        const watched = await window(cpu, windowMs);
        events += open.reduce((sum, f, i) => sum + f.events - (counted[i] ?? 0), 0);
        bytes = Math.max(bytes, ...open.map((f) => f.bytes / Math.max(1, f.events)));
        for (const f of open) f.close();
        await sleep(2000);
        costs.push(watched - idle);
        rows.push(`| ${round} | ${pct(idle)} | ${pct(watched)} | ${pct(watched - idle)} |`);
      }
      const status = await opened.population.status();
      const mean = costs.reduce((a, b) => a + b, 0) / costs.length;
      // The median too: a window now and then takes a collection or a neighbour's stall.
      const sorted = [...costs].sort((a, b) => a - b);
      const median =
        ((sorted[Math.floor((sorted.length - 1) / 2)] ?? 0) +
          (sorted[Math.ceil((sorted.length - 1) / 2)] ?? 0)) /
        2;
      console.log(
        [
          `broker pid ${pid}, ${status.open} of ${connections} idle connections open, ${status.errors.total} errors; windows of ${windowMs / 1000} s`,
          '',
          `| round | broker CPU, nothing watched | with ${watching} | its cost |`,
          '| --: | --: | --: | --: |',
          ...rows,
          `| mean (median) |  |  | ${pct(mean)} (${pct(median)}) |`,
          '',
          tracing
            ? `trace: ${events} reads in the watched windows, ${Math.round(bytes)} bytes each`
            : `feed: ${events} snapshots read in the watched windows, ${Math.round(bytes)} bytes each`,
          `page: ${bundle.files} files, ${bundle.raw} bytes, ${bundle.gzipped} bytes gzipped (${bundle.script} of them the script)`,
        ].join('\n'),
      );
    } finally {
      await opened.population.close();
    }
  } finally {
    await server.process.stop();
  }
}

/** Percent of one core used over a window. */
async function window(cpuMs: () => number, ms: number): Promise<number> {
  const start = cpuMs();
  const began = performance.now();
  await sleep(ms);
  return ((cpuMs() - start) / (performance.now() - began)) * 100;
}

function pct(share: number): string {
  return `${share.toFixed(2)} %`;
}

/** The feed read as the page reads it (loopback: the bench's broker has no admin token). */
async function openFeed(port: number): Promise<Feed> {
  const controller = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}/admin/v1/dashboard/feed`, { signal: controller.signal });
  if (!res.ok || res.body === null) throw new Error(`the feed answered ${res.status}`);
  const feed: Feed = { events: 0, bytes: 0, close: () => controller.abort() };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        feed.bytes += next.value.byteLength;
        feed.events += decoder.decode(next.value, { stream: true }).split('event: snapshot').length - 1;
      }
    } catch {
      // Aborted by close().
    }
  })();
  return feed;
}

/**
 * A trace running as the page runs one: started on the broker (a topic filter matching every topic),
 * read every second; `events` counts the reads. Closing it stops it on the broker.
 */
async function openTrace(port: number): Promise<Feed> {
  const base = `http://127.0.0.1:${port}/admin/v1/traces`;
  const res = await fetch(base, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'mqtt-topic', key: '#', durationSec: 1800 }),
  });
  if (!res.ok) throw new Error(`the trace start answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const feed: Feed = {
    events: 0,
    bytes: 0,
    close: () => {
      clearInterval(timer);
      void fetch(`${base}/${encodeURIComponent(id)}`, { method: 'DELETE' }).catch(() => undefined);
    },
  };
  const timer = setInterval(() => {
    void fetch(`${base}/${encodeURIComponent(id)}?limit=500`)
      .then((read) => read.arrayBuffer())
      .then((body) => {
        feed.events++;
        feed.bytes += body.byteLength;
      })
      .catch(() => undefined);
  }, 1000);
  return feed;
}

/** The built page's files, as the broker serves them. */
function bundleBytes(): { files: number; raw: number; gzipped: number; script: number } {
  const sizes = { files: 0, raw: 0, gzipped: 0, script: 0 };
  for (const entry of readdirSync(WEB_DIR, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const body = readFileSync(join(entry.parentPath, entry.name));
    const gzipped = gzipSync(body, { level: 9 }).byteLength;
    sizes.files++;
    sizes.raw += body.byteLength;
    sizes.gzipped += gzipped;
    if (entry.name.endsWith('.js')) sizes.script += gzipped;
  }
  return sizes;
}

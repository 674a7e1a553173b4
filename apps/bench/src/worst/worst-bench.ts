import WebSocket from 'ws';
import { everyModuleConfig, writeBrokerConfig } from '../broker-config.js';
import { freePort, killChildrenOnExit, startBrokerServer, type ServerProcess } from '../child-servers.js';
import { integer, parseFlags } from '../cli-options.js';
import { openClient } from '../load/ws-client.js';
import { processCpuMs } from '../process-cpu.js';
import { summarizeLatencies, type LatencySummary } from '../stats.js';
import { Bystander } from '../bystander.js';
import { ATTACKS, type Attack } from './attacks.js';

export const WORST_USAGE = `Usage: node dist/apps/bench/src/main.js worst [options]

The broker's worst message per protocol (issue 28): one broker process with every module; a chat
client measures its round trip (say, hear it back) every --interval ms, first with the broker
otherwise idle, then while one attacker sends one protocol's costliest message in a loop (each
sent once the previous one was answered; a closed connection is opened again). Per attack: the
broker's CPU per message and per KB, and the bystander's p50/p99 against its idle p99.

  --seconds <n>   length of the idle phase and of each attack phase (default 10)
  --interval <ms> the bystander's pace (default 10)
  --help          this text`;

const TIMEOUT_MS = 10_000;
/** The target: the bystander's p99 under attack stays within this multiple of its idle p99. */
const TARGET_RATIO = 2;

interface Phase {
  readonly name: string;
  readonly bytes: number;
  readonly answered: number;
  readonly reconnects: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly bystander: LatencySummary;
  readonly bystanderErrors: number;
}

export async function runWorstBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { seconds: '10', interval: '10' });
  if (values === null) {
    console.log(WORST_USAGE);
    return;
  }
  const seconds = integer('--seconds', values.seconds, 1, 600);
  const intervalMs = integer('--interval', values.interval, 1, 1000);
  killChildrenOnExit();
  const port = await freePort();
  const server = await startBrokerServer(
    await writeBrokerConfig(everyModuleConfig(port)),
    port,
    {},
    'broker',
  );
  try {
    const phases: Phase[] = [await phase(server, 'idle', null, seconds, intervalMs)];
    for (const attack of ATTACKS) phases.push(await phase(server, attack.name, attack, seconds, intervalMs));
    console.log(report(phases, seconds, intervalMs));
  } finally {
    await server.stop();
  }
}

async function phase(
  server: ServerProcess,
  name: string,
  attack: Attack | null,
  seconds: number,
  intervalMs: number,
): Promise<Phase> {
  const bystander = await Bystander.open(server.port);
  const until = performance.now() + seconds * 1000;
  const cpuBefore = processCpuMs(server.pid) ?? 0;
  const started = performance.now();
  const [rtts, attacked] = await Promise.all([
    bystander.measure(until, intervalMs),
    attack === null
      ? Promise.resolve({ answered: 0, reconnects: 0 })
      : attackLoop(server.port, attack, until),
  ]);
  const wallMs = performance.now() - started;
  const cpuMs = (processCpuMs(server.pid) ?? 0) - cpuBefore;
  bystander.close();
  const sample = attack?.message(0);
  return {
    name,
    bytes: sample === undefined ? 0 : Buffer.byteLength(sample),
    ...attacked,
    cpuMs,
    wallMs,
    bystander: summarizeLatencies(rtts.latencies),
    bystanderErrors: rtts.errors,
  };
}

/** Sends the attack message, waits for its one answer (a message or the close), and again, until `until`. */
async function attackLoop(
  port: number,
  attack: Attack,
  until: number,
): Promise<{ answered: number; reconnects: number }> {
  let answered = 0;
  let reconnects = -1;
  let seq = 0;
  while (performance.now() < until) {
    const ws = await openClient({ port, path: attack.path, subprotocol: attack.subprotocol }, TIMEOUT_MS);
    reconnects++;
    for (const step of attack.setup) {
      ws.send(step);
      await answer(ws);
    }
    while (performance.now() < until && ws.readyState === WebSocket.OPEN) {
      ws.send(attack.message(seq++));
      if (await answer(ws)) answered++;
    }
    ws.terminate();
  }
  return { answered, reconnects: Math.max(0, reconnects) };
}

/** The next message or the close: true once either arrives, false on a timeout. */
function answer(ws: WebSocket): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (result: boolean) => {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onMessage);
      resolve(result);
    };
    const onMessage = () => done(true);
    const timer = setTimeout(() => done(false), TIMEOUT_MS);
    ws.once('message', onMessage);
    ws.once('close', onMessage);
  });
}

function report(phases: readonly Phase[], seconds: number, intervalMs: number): string {
  const idle = phases[0] as Phase;
  const lines = [
    `Worst message per protocol: ${seconds} s per phase, bystander chat round trip every ${intervalMs} ms.`,
    '',
    '| phase | message bytes | answered | reconnects | broker CPU | CPU per message | CPU per KB | bystander p50 | bystander p99 | p99 / idle p99 | verdict |',
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- |',
  ];
  for (const p of phases) {
    const perMessage = p.answered === 0 ? null : p.cpuMs / p.answered;
    const ratio = p.bystander.p99 / idle.bystander.p99;
    const errors = p.bystanderErrors > 0 ? `${p.bystanderErrors} bystander errors` : null;
    const verdict = p === idle ? '' : (errors ?? (ratio <= TARGET_RATIO ? 'met' : 'not met'));
    lines.push(
      `| ${p.name} | ${p.bytes || ''} | ${p.answered || ''} | ${p === idle ? '' : p.reconnects} | ` +
        `${((100 * p.cpuMs) / p.wallMs).toFixed(0)} % | ${perMessage === null ? '' : `${perMessage.toFixed(2)} ms`} | ` +
        `${perMessage === null ? '' : `${((perMessage * 1024) / p.bytes).toFixed(3)} ms`} | ` +
        `${p.bystander.p50.toFixed(2)} ms | ${p.bystander.p99.toFixed(2)} ms | ${p === idle ? '' : `${ratio.toFixed(2)}x`} | ${verdict} |`,
    );
  }
  lines.push('', `Target: the bystander's p99 under each attack within ${TARGET_RATIO}x its idle p99.`);
  return lines.join('\n');
}

import { type ChildProcess } from 'node:child_process';
import { type Hardening, startEveryModuleBroker } from '../broker-config.js';
import { forkLoadProcess } from '../child-servers.js';
import { integer, parseFlags } from '../cli-options.js';
import { pinToCpu } from '../cpu-pinning.js';
import { median } from '../stats.js';
import { Bystander } from '../bystander.js';
import { ATTACKS } from '../worst/attacks.js';

export const SHUTDOWN_USAGE = `Usage: node dist/apps/bench/src/main.js shutdown [options]

How long the broker takes to exit after SIGTERM (issue 37, item 10): one broker process with every
module (as the worst-message benchmark runs it) and a connected chat client, with nobody
else or while an attacker pipelines admin GETs from its own address. Per run a fresh broker; the
time runs from the signal to the process's exit, which the drain (drainTimeoutMs, 10 s by default)
bounds.

  --runs <n>      runs per condition (default 6)
  --hardening <h> hardened (default) or defaults, as the worst-message benchmark's broker
  --warmup <s>    seconds of traffic before the signal (default 3)
  --help          this text`;

/** The drain bound of the broker as configured (the default), and the margin the issue allows past it. */
const DRAIN_TIMEOUT_MS = 10_000;
const MARGIN_MS = 1_000;
const PIPELINING = ATTACKS.findIndex((attack) => attack.name.startsWith('HTTP: 32 pipelined'));

interface Run {
  readonly exitMs: number;
  readonly killed: boolean;
}

export async function runShutdownBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { runs: '6', warmup: '3', hardening: 'hardened' });
  if (values === null) {
    console.log(SHUTDOWN_USAGE);
    return;
  }
  const runs = integer('--runs', values.runs, 1, 50);
  const warmupS = integer('--warmup', values.warmup, 1, 60);
  const hardening = values.hardening;
  if (hardening !== 'hardened' && hardening !== 'defaults') {
    throw new Error(`--hardening: hardened or defaults, not ${hardening}`);
  }
  const results: Record<'idle' | 'pipelining', Run[]> = { idle: [], pipelining: [] };
  for (let run = 1; run <= runs; run++) {
    for (const condition of ['idle', 'pipelining'] as const) {
      const result = await oneRun(condition === 'pipelining', warmupS, hardening);
      results[condition].push(result);
      console.error(
        `run ${run} ${condition}: exit ${result.exitMs.toFixed(0)} ms${result.killed ? ' (SIGKILL)' : ''}`,
      );
    }
  }
  const lines = [
    `Exit after SIGTERM: ${runs} runs per condition, each a fresh broker (every module, ${hardening}), ` +
      `a chat client connected, the signal after ${warmupS} s of traffic.`,
    '',
    '| condition | runs | exit after SIGTERM, median | max | past drainTimeoutMs + 1 s | killed |',
    '| --- | --: | --: | --: | --: | --: |',
  ];
  for (const [condition, rows] of Object.entries(results)) {
    const times = rows.map((r) => r.exitMs);
    lines.push(
      `| ${condition === 'idle' ? 'a chat client only' : 'and an attacker pipelining admin GETs'} | ${rows.length} | ` +
        `${median(times).toFixed(0)} ms | ${Math.max(...times).toFixed(0)} ms | ` +
        `${times.filter((t) => t > DRAIN_TIMEOUT_MS + MARGIN_MS).length} | ${rows.filter((r) => r.killed).length} |`,
    );
  }
  lines.push(
    '',
    `Target: every exit within drainTimeoutMs (${DRAIN_TIMEOUT_MS} ms) + ${MARGIN_MS} ms, none killed.`,
  );
  console.log(lines.join('\n'));
  if (
    Object.values(results).some((rows) =>
      rows.some((r) => r.killed || r.exitMs > DRAIN_TIMEOUT_MS + MARGIN_MS),
    )
  )
    process.exitCode = 1;
}

async function oneRun(attacked: boolean, warmupS: number, hardening: Hardening): Promise<Run> {
  const server = await startEveryModuleBroker(hardening);
  pinToCpu(server.pid, 0);
  const bystander = await Bystander.open(server.port);
  let attacker: ChildProcess | null = null;
  try {
    if (attacked) {
      attacker = forkLoadProcess(new URL('../worst/attacker-process.js', import.meta.url), [
        String(server.port),
        String(PIPELINING),
        String(warmupS + 30),
      ]);
    }
    // Traffic on both sides before the signal: the bystander's round trips, the attacker's pipeline.
    await bystander.measure(performance.now() + warmupS * 1000, 10);
    const signalled = performance.now();
    process.kill(server.pid, 'SIGTERM');
    const killed = !(await exited(server.pid, DRAIN_TIMEOUT_MS + 5_000));
    const exitMs = performance.now() - signalled;
    return { exitMs, killed };
  } finally {
    attacker?.kill('SIGKILL');
    bystander.close();
    await server.stop();
  }
}

/** True once the process is gone; false after `timeoutMs`, when it is SIGKILLed instead. */
async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (performance.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

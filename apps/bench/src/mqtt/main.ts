import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { killChildrenOnExit } from '../child-servers.js';
import { runCli } from '../protocol-bench/cli.js';
import { errorTotal } from '../protocol-bench/markdown.js';
import { MQTT_USAGE, parseMqttOptions, type MqttBenchOptions } from './mqtt-options.js';
import {
  errorsList,
  latencyRoundsTable,
  memoryRoundsTable,
  summary,
  throughputRoundsTable,
} from './mqtt-report.js';
import {
  measureIdleMemory,
  runServerRound,
  scenarios,
  type LatencyRow,
  type MemoryRow,
  type ThroughputRow,
} from './mqtt-rounds.js';
import { expectDelivery } from './mqtt-preflight.js';
import { MQTT_SERVER_KINDS, startMqttServer, type MqttServer } from './mqtt-servers.js';

async function main(options: MqttBenchOptions): Promise<void> {
  killChildrenOnExit();
  const dir = await mkdtemp(join(tmpdir(), 'mqtt-bench-'));
  // On exit rather than in finally: Ctrl-C ends the process without running finally blocks.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));

  const memory: MemoryRow[] = [];
  const throughput: ThroughputRow[] = [];
  const latency: LatencyRow[] = [];
  // Memory first, each round on freshly started servers: after the throughput runs a server's heap
  // has grown, and new connections would fill that space without moving RSS.
  for (let round = 1; round <= options.rounds; round++) {
    for (const kind of MQTT_SERVER_KINDS) {
      const server = await startMqttServer(kind, dir);
      try {
        await expectDelivery(server);
        memory.push(await measureIdleMemory(server, round, options));
      } finally {
        await server.process.stop();
      }
    }
  }

  const servers: MqttServer[] = [];
  try {
    for (const kind of MQTT_SERVER_KINDS) servers.push(await startMqttServer(kind, dir));
    for (const server of servers) await expectDelivery(server);
    // broker, Mosquitto, Aedes, broker, ...: alternating spreads drift (neighbours, heat) over all three.
    for (let round = 1; round <= options.rounds; round++) {
      for (const server of servers) {
        const result = await runServerRound(server, round, options);
        throughput.push(...result.throughput);
        latency.push(...result.latency);
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.process.stop()));
  }

  printReport(options, throughput, latency, memory);
  const errors = [...throughput, ...latency, ...memory].reduce((n, r) => n + errorTotal(r.errors), 0);
  if (errors > 0) process.exitCode = 1;
}

function printReport(
  options: MqttBenchOptions,
  throughput: readonly ThroughputRow[],
  latency: readonly LatencyRow[],
  memory: readonly MemoryRow[],
): void {
  const { tables, verdicts } = summary(scenarios(options), throughput, latency, memory);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    [
      '## MQTT benchmark',
      '',
      `${cpus().length} × ${cpu}, Node ${process.version}; ${options.rounds} rounds per server, ` +
        `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured per run; ` +
        `closed loop with ${options.window} messages under way per fan-in publisher and ` +
        `${options.fanoutWindow} for the fan-out publisher; 64-byte payloads, MQTT 3.1.1; ` +
        `load clients writing ${options.clientWrites === 'tick' ? "each tick's sends at once" : 'each message at once'}; ` +
        `${options.idleConnections} idle connections for memory.`,
      '',
      throughputRoundsTable(throughput),
      '',
      latencyRoundsTable(latency),
      '',
      memoryRoundsTable(memory),
      '',
      tables,
      '',
      ...verdicts.lines,
      '',
      errorsList([
        ...throughput.map((r) => ({ server: r.server, label: r.scenario.label, errors: r.errors })),
        ...latency.map((r) => ({ server: r.server, label: `latency ${r.scenario.label}`, errors: r.errors })),
        ...memory.map((r) => ({ server: r.server, label: 'idle memory', errors: r.errors })),
      ]),
    ].join('\n'),
  );
}

runCli(process.argv.slice(2), parseMqttOptions, MQTT_USAGE, main);

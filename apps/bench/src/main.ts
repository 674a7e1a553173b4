import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerBenchConfig } from './broker-config.js';
import {
  freePort,
  killChildrenOnExit,
  startBareServer,
  startBrokerServer,
  type ServerProcess,
} from './child-servers.js';
import { parseOptions, USAGE, UsageError, type BenchOptions } from './cli-options.js';
import { measureRound, type RoundResult, type RoundSettings } from './measure-round.js';
import { expectBrokerChecks, expectHandshake } from './preflight.js';
import { errorCount, errorsList, roundsTable, summarize, summaryTable } from './report.js';
import { signTokens } from './tokens.js';
import { prepareUpgrades, type ServerTarget } from './upgrade-request.js';

const ORIGIN = 'https://app.example.com';
const SUBPROTOCOL = 'chat.v1';
/** Distinct tokens and keys, cycled by the load loops. */
const DISTINCT_REQUESTS = 1024;
const CONNECTION_TIMEOUT_MS = 5_000;
const TARGET_RATE_RATIO = 0.9;

async function main(): Promise<void> {
  let options: BenchOptions | null;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (options === null) {
    console.log(USAGE);
    return;
  }
  killChildrenOnExit();

  const secret = randomBytes(32).toString('hex');
  const tokens = await signTokens(secret, DISTINCT_REQUESTS);
  const token = tokens[0] as string;
  const dir = await mkdtemp(join(tmpdir(), 'broker-bench-'));
  // On exit rather than in finally: Ctrl-C ends the process without running finally blocks.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const servers: ServerProcess[] = [];
  try {
    const configFile = join(dir, 'broker.json');
    const brokerPort = await freePort();
    await writeFile(configFile, JSON.stringify(brokerBenchConfig(brokerPort, secret, ORIGIN)));
    const bare = await startBareServer();
    servers.push(bare);
    const broker = await startBrokerServer(configFile, brokerPort);
    servers.push(broker);

    // The same request bytes (token and Origin included) go to both: only the server differs.
    const target = (port: number): ServerTarget => ({
      port,
      path: '/chat',
      origin: ORIGIN,
      subprotocol: SUBPROTOCOL,
    });
    await expectHandshake(bare.name, target(bare.port), token);
    await expectHandshake(broker.name, target(broker.port), token);
    await expectBrokerChecks(target(broker.port), token);

    const results = await runRounds([bare, broker], target, tokens, options);
    printReport(results, bare.name, broker.name, options);
    if (results.some((r) => r.errors.size > 0)) process.exitCode = 1;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** bare, broker, bare, broker, ...: alternating spreads drift (thermal, neighbours) over both. */
async function runRounds(
  servers: readonly ServerProcess[],
  target: (port: number) => ServerTarget,
  tokens: readonly string[],
  options: BenchOptions,
): Promise<RoundResult[]> {
  const settings: RoundSettings = {
    concurrency: options.concurrency,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    timeoutMs: CONNECTION_TIMEOUT_MS,
    subprotocol: SUBPROTOCOL,
  };
  const pools = new Map(servers.map((s) => [s, prepareUpgrades(target(s.port), tokens)]));
  const results: RoundResult[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    for (const server of servers) {
      const result = await measureRound(server, round, pools.get(server) ?? [], settings);
      results.push(result);
      // Progress on stderr keeps stdout a clean markdown report.
      console.error(
        `round ${round}/${options.rounds} ${server.name}: ${result.rate.toFixed(0)} handshakes/s, ` +
          `p99 ${result.p99Ms.toFixed(2)} ms, ${errorCount(result)} errors`,
      );
    }
  }
  return results;
}

function printReport(
  results: readonly RoundResult[],
  bareName: string,
  brokerName: string,
  options: BenchOptions,
): void {
  const bare = summarize(bareName, results);
  const broker = summarize(brokerName, results);
  const rateRatio = broker.rate / bare.rate;
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    [
      `## Handshake benchmark`,
      '',
      `${cpus().length} × ${cpu}, Node ${process.version}; ${options.concurrency} concurrent loops, ` +
        `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured per round, ` +
        `${options.rounds} rounds per server. Broker: origin + JWT checks on, info logging to /dev/null.`,
      '',
      roundsTable(results),
      '',
      summaryTable(bare, broker),
      '',
      `Broker rate = ${rateRatio.toFixed(2)} × bare (target ≥ ${TARGET_RATE_RATIO}): ` +
        (rateRatio >= TARGET_RATE_RATIO ? 'met.' : 'NOT met.'),
      '',
      errorsList(results),
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});

import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { brokerBenchConfig, writeBrokerConfig } from './broker-config.js';
import {
  freePort,
  killChildrenOnExit,
  startBareServer,
  startBrokerServer,
  startNodeServer,
  type ServerProcess,
} from './child-servers.js';
import { parseOptions, USAGE, type BenchOptions } from './cli-options.js';
import { measureRound, type RoundSettings } from './measure-round.js';
import { expectBrokerChecks, expectHandshake } from './preflight.js';
import { comparisonReport, type RoundResult, summarize, summaryTable } from './report.js';
import { alternateRounds, machine } from './rounds.js';
import { jwksKeys, secretKeys } from './tokens.js';
import { prepareUpgrades, type ServerTarget } from './upgrade-request.js';

const ORIGIN = 'https://app.example.com';
const SUBPROTOCOL = 'chat.v1';
const CONNECTION_TIMEOUT_MS = 5_000;
const TARGET_RATE_RATIO = 0.9;

/** Handshakes per second, bare ws vs. the broker; throws UsageError on bad flags. */
export async function runHandshakeBench(argv: readonly string[]): Promise<void> {
  const options = parseOptions(argv);
  if (options === null) {
    console.log(USAGE);
    return;
  }
  killChildrenOnExit();

  const keys = options.keys === 'jwks' ? await jwksKeys() : secretKeys(randomBytes(32).toString('hex'));
  const tokens = await keys.sign(options.tokens);
  const token = tokens[0] as string;
  const servers: ServerProcess[] = [];
  try {
    const brokerPort = await freePort();
    const configFile = await writeBrokerConfig(brokerBenchConfig(brokerPort, keys.jwt, ORIGIN));
    const bare = await startBareServer();
    servers.push(bare);
    const broker = await startBrokerServer(configFile, brokerPort);
    servers.push(broker);
    const guarded = options.guard ? await startGuardedBroker(keys.jwt) : null;
    if (guarded !== null) servers.push(guarded);

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
    if (guarded !== null) await expectHandshake(guarded.name, target(guarded.port), token);

    const results = await runRounds(servers, target, tokens, options);
    printReport(results, bare.name, broker.name, options);
    if (guarded !== null) console.log(`\n${guardCost(results, broker.name, guarded.name)}`);
    if (results.some((r) => r.errors.size > 0)) process.exitCode = 1;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await keys.close();
  }
}

/** The broker with one application handshake guard (guarded-broker.ts), configured as the broker is. */
async function startGuardedBroker(jwt: object): Promise<ServerProcess> {
  const port = await freePort();
  const configFile = await writeBrokerConfig(brokerBenchConfig(port, jwt, ORIGIN));
  const script = fileURLToPath(new URL('./guarded-broker.js', import.meta.url));
  return startNodeServer('broker + guard', script, { CONFIG: configFile, LOG_LEVEL: 'info' }, port);
}

/** What the guard adds: the guarded broker against the same broker without it, same rounds. */
function guardCost(results: readonly RoundResult[], brokerName: string, guardedName: string): string {
  const broker = summarize(brokerName, results);
  const guarded = summarize(guardedName, results);
  const extra =
    broker.serverCpuUsPerOp === null || guarded.serverCpuUsPerOp === null
      ? 'n/a'
      : `${(guarded.serverCpuUsPerOp - broker.serverCpuUsPerOp).toFixed(1)} µs`;
  return [
    "## A handshake guard's cost",
    '',
    summaryTable(broker, guarded, 'handshake'),
    '',
    `One guard adds ${extra} of server CPU per handshake (medians of rounds).`,
  ].join('\n');
}

function runRounds(
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
  return alternateRounds(servers, options.rounds, 'handshake', (server, round) =>
    measureRound(server, round, pools.get(server) ?? [], settings),
  );
}

function printReport(
  results: readonly RoundResult[],
  bareName: string,
  brokerName: string,
  options: BenchOptions,
): void {
  console.log(
    comparisonReport({
      title: 'Handshake benchmark',
      setup:
        `${machine()}; ${options.concurrency} concurrent loops, ${options.tokens} distinct tokens, ` +
        `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured per round, ` +
        `${options.rounds} rounds per server. Broker: origin + JWT checks on (${options.keys === 'jwks' ? 'ES256 keys from a JWKS URL' : 'HS256 secret'}), info logging to /dev/null.`,
      results,
      reference: bareName,
      ours: brokerName,
      unit: 'handshake',
      target: TARGET_RATE_RATIO,
      noErrors: 'every response was a correct 101',
    }),
  );
}

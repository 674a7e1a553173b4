import { brokerBaseConfig } from '../broker-config.js';
import { integer, parseFlags } from '../cli-options.js';
import { ROUND_FLAGS, roundOptions, withContenders } from '../comparison-run.js';
import { runFanout } from '../load/fanout-load.js';
import { measureSocketRound } from '../load/measure-socket-round.js';
import { comparisonReport } from '../report.js';
import { alternateRounds, machine } from '../rounds.js';
import { runRpc } from './rpc-load.js';
import { wampFanoutClients } from './wamp-fanout-clients.js';
import { expectWampyWorks } from './wampy-check.js';

export const WAMP_USAGE = `Usage: node dist/apps/bench/src/main.js wamp [options]

WAMP (wamp.2.json) pub/sub fan-out and RPC, for fox-wamp and for the broker's /ws (realm1),
alternating rounds: events first, then calls.

  --subscribers <n>  subscriber sessions of the one publisher (default 1000)
  --in-flight <n>    publications not yet received by every subscriber (default 8: both routers
                     saturated; fox-wamp's rate is the same from 1 to 16, the broker's rises with it)
  --callers <n>      caller sessions of the one callee (its own process), each in a closed loop (default 100)
  --duration <s>     measured seconds per round (default 5)
  --warmup <s>       unmeasured seconds before each round (default 1)
  --rounds <n>       rounds per server and load (default 3)
  --help             this text`;

const TARGET_RATE_RATIO = 1.5;
const TIMEOUT_MS = 10_000;

export async function runWampBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { subscribers: '1000', 'in-flight': '8', callers: '100', ...ROUND_FLAGS });
  if (values === null) {
    console.log(WAMP_USAGE);
    return;
  }
  const options = roundOptions(values);
  const window = { ...options, timeoutMs: TIMEOUT_MS };
  const subscribers = integer('--subscribers', values.subscribers, 1, 20_000);
  const inFlight = integer('--in-flight', values['in-flight'], 1, 100);
  const callers = integer('--callers', values.callers, 1, 10_000);

  const contenders = {
    reference: { name: 'fox-wamp', script: new URL('./fox-wamp-server.js', import.meta.url) },
    brokerConfig: wampBrokerConfig,
  };
  await withContenders(contenders, async (reference, broker) => {
    const servers = [reference, broker];
    for (const server of servers) await expectWampyWorks(server.name, server.port);
    const events = await alternateRounds(servers, options.rounds, 'event', (server, round) =>
      measureSocketRound(server, round, TIMEOUT_MS, (hooks) =>
        runFanout(wampFanoutClients(server.port, TIMEOUT_MS), { ...window, subscribers, inFlight, ...hooks }),
      ),
    );
    const calls = await alternateRounds(servers, options.rounds, 'call', (server, round) =>
      measureSocketRound(server, round, TIMEOUT_MS, (hooks) =>
        runRpc(server.port, { ...window, callers, ...hooks }),
      ),
    );
    const timing =
      `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured per round, ` +
      `${options.rounds} rounds per server`;
    const names = { reference: reference.name, ours: broker.name, target: TARGET_RATE_RATIO };
    console.log(
      [
        comparisonReport({
          ...names,
          title: 'WAMP pub/sub fan-out',
          setup:
            `${machine()}; 1 publisher (no acknowledgement), ${subscribers} subscriber sessions, ` +
            `${inFlight} publications in flight, ${timing}. An event is one EVENT received by one ` +
            'subscriber; latency is publish to receive.',
          results: events,
          unit: 'event',
          noErrors: 'every subscriber received every event once, in order',
        }),
        '',
        comparisonReport({
          ...names,
          title: 'WAMP RPC',
          setup:
            `${machine()}; 1 callee echoing its arguments (own process), ${callers} caller sessions each in a ` +
            `closed loop (CALL, wait for RESULT, repeat), ${timing}. Latency is CALL to RESULT.`,
          results: calls,
          unit: 'call',
          noErrors: 'every RESULT answered its CALL with its arguments',
        }),
      ].join('\n'),
    );
    return [...events, ...calls];
  });
}

/** The default /ws endpoint (realm1, anonymous), limits out of the way. */
function wampBrokerConfig(port: number): object {
  return {
    ...brokerBaseConfig(port),
    endpoints: [
      { path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json', maxConnections: 100_000 },
    ],
  };
}

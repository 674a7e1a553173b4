import { writeBrokerConfig, brokerBaseConfig } from '../broker-config.js';
import {
  freePort,
  killChildrenOnExit,
  startBrokerServer,
  startScriptServer,
  type ServerProcess,
} from '../child-servers.js';
import { integer, parseFlags, seconds } from '../cli-options.js';
import { measureFanoutRound } from '../load/measure-fanout.js';
import { comparisonReport } from '../report.js';
import { alternateRounds, machine } from '../rounds.js';
import { graphqlFanoutClients } from './graphql-clients.js';

export const GRAPHQL_USAGE = `Usage: node dist/apps/bench/src/main.js graphql [options]

GraphQL subscription fan-out (graphql-transport-ws): one publisher's events to every subscriber,
for graphql-ws useServer on a bare ws server and for the broker's /graphql, alternating rounds.

  --subscribers <n>  subscriber connections (default 2000)
  --in-flight <n>    events published but not yet received by every subscriber (default 4)
  --duration <s>     measured seconds per round (default 5)
  --warmup <s>       unmeasured seconds before each round (default 1)
  --rounds <n>       rounds per server (default 3)
  --help             this text`;

const TARGET_RATE_RATIO = 1.0;
const TIMEOUT_MS = 10_000;

export async function runGraphqlBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, {
    subscribers: '2000',
    'in-flight': '4',
    duration: '5',
    warmup: '1',
    rounds: '3',
  });
  if (values === null) {
    console.log(GRAPHQL_USAGE);
    return;
  }
  const settings = {
    subscribers: integer('--subscribers', values.subscribers, 1, 20_000),
    inFlight: integer('--in-flight', values['in-flight'], 1, 100),
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    timeoutMs: TIMEOUT_MS,
  };
  const rounds = integer('--rounds', values.rounds, 1, 50);
  killChildrenOnExit();

  const servers: ServerProcess[] = [];
  try {
    servers.push(await startScriptServer('graphql-ws', new URL('./graphql-ws-server.js', import.meta.url)));
    const brokerPort = await freePort();
    servers.push(
      await startBrokerServer(await writeBrokerConfig(graphqlBrokerConfig(brokerPort)), brokerPort),
    );

    const [reference, ours] = servers as [ServerProcess, ServerProcess];
    const results = await alternateRounds(servers, rounds, 'message', (server, round) =>
      measureFanoutRound(
        server,
        round,
        graphqlFanoutClients(
          server.port,
          // The broker's WAMP module bridges its bus realm: one more bus subscription, to every topic.
          settings.subscribers + (server === ours ? 1 : 0),
          settings.timeoutMs,
        ),
        settings,
      ),
    );
    console.log(
      comparisonReport({
        title: 'GraphQL subscription fan-out',
        setup:
          `${machine()}; ${settings.subscribers} graphql-transport-ws subscribers, 1 publisher (publish ` +
          `mutation), ${settings.inFlight} events in flight, ${settings.warmupMs / 1000} s warm-up + ` +
          `${settings.durationMs / 1000} s measured per round, ${rounds} rounds per server. ` +
          'A message is one `next` received by one subscriber; latency is publish to receive.',
        results,
        reference: reference.name,
        ours: ours.name,
        unit: 'message',
        target: TARGET_RATE_RATIO,
        noErrors: 'every subscriber received every event once, in order',
      }),
    );
    if (results.some((r) => r.errors.size > 0)) process.exitCode = 1;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** The default /graphql endpoint (both GraphQL protocols, no auth), limits out of the way. */
function graphqlBrokerConfig(port: number): object {
  return {
    ...brokerBaseConfig(port),
    endpoints: [
      {
        path: '/graphql',
        subprotocols: ['graphql-transport-ws', 'graphql-ws'],
        subprotocolOrder: 'server',
        defaultModule: 'graphql-transport-ws',
        maxConnections: 100_000,
      },
    ],
  };
}

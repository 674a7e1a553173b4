import { brokerBaseConfig } from '../broker-config.js';
import { integer, parseFlags } from '../cli-options.js';
import { ROUND_FLAGS, roundOptions, withContenders } from '../comparison-run.js';
import { runFanout } from '../load/fanout-load.js';
import { measureSocketRound } from '../load/measure-socket-round.js';
import { comparisonReport } from '../report.js';
import { alternateRounds, machine } from '../rounds.js';
import { graphqlFanoutClients } from './graphql-clients.js';

/** The broker's MQTT and WAMP modules each bridge every bus topic: two more bus subscriptions per event. */
const BROKER_BUS_BRIDGES = 2;

export const GRAPHQL_USAGE = `Usage: node dist/apps/bench/src/main.js graphql [options]

GraphQL subscription fan-out (graphql-transport-ws): one publisher's events to every subscriber,
for graphql-ws useServer on a bare ws server and for the broker's /graphql, alternating rounds.

  --subscribers <n>  subscriber connections (default 2000)
  --in-flight <n>    events published but not yet received by every subscriber (default 2)
  --duration <s>     measured seconds per round (default 5)
  --warmup <s>       unmeasured seconds before each round (default 1)
  --rounds <n>       rounds per server (default 3)
  --help             this text`;

const TARGET_RATE_RATIO = 1.0;
const TIMEOUT_MS = 10_000;

export async function runGraphqlBench(argv: readonly string[]): Promise<void> {
  const values = parseFlags(argv, { subscribers: '2000', 'in-flight': '2', ...ROUND_FLAGS });
  if (values === null) {
    console.log(GRAPHQL_USAGE);
    return;
  }
  const options = roundOptions(values);
  const settings = {
    ...options,
    subscribers: integer('--subscribers', values.subscribers, 1, 20_000),
    inFlight: integer('--in-flight', values['in-flight'], 1, 100),
    timeoutMs: TIMEOUT_MS,
  };
  const contenders = {
    reference: { name: 'graphql-ws', script: new URL('./graphql-ws-server.js', import.meta.url) },
    brokerConfig: graphqlBrokerConfig,
  };
  await withContenders(contenders, async (reference, broker) => {
    const results = await alternateRounds([reference, broker], options.rounds, 'message', (server, round) =>
      measureSocketRound(server, round, TIMEOUT_MS, (hooks) =>
        runFanout(
          graphqlFanoutClients(
            server.port,
            settings.subscribers + (server === broker ? BROKER_BUS_BRIDGES : 0),
            TIMEOUT_MS,
          ),
          { ...settings, ...hooks },
        ),
      ),
    );
    console.log(
      comparisonReport({
        title: 'GraphQL subscription fan-out',
        setup:
          `${machine()}; ${settings.subscribers} graphql-transport-ws subscribers, 1 publisher (publish ` +
          `mutation), ${settings.inFlight} events in flight, ${options.warmupMs / 1000} s warm-up + ` +
          `${options.durationMs / 1000} s measured per round, ${options.rounds} rounds per server. ` +
          'A message is one `next` received by one subscriber; latency is publish to receive.',
        results,
        reference: reference.name,
        ours: broker.name,
        unit: 'message',
        target: TARGET_RATE_RATIO,
        noErrors: 'every subscriber received every event once, in order',
      }),
    );
    return results;
  });
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

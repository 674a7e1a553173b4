import { integer, seconds, UsageError } from '../cli-options.js';
import { parseFlags } from '../protocol-bench/cli.js';
import { type OcppServerKind } from './ocpp-servers.js';

export interface OcppBenchOptions {
  readonly rounds: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly chargePoints: number;
  /** The broker first, then the references it is compared with. */
  readonly servers: readonly OcppServerKind[];
}

export const OCPP_USAGE = `Usage: node dist/apps/bench/src/ocpp/main.js [options]

OCPP 1.6J: our ocpp1.6 module and ocpp-rpc's RPCServer (strict mode), alternating rounds; each
charge point boots, then alternates Heartbeat and MeterValues, one CALL outstanding at a time.

  --rounds <n>         rounds per server (default 3)
  --warmup <s>         unmeasured seconds before each round (default 1)
  --duration <s>       measured seconds per round (default 5)
  --charge-points <n>  simulated charge points (default 1000)
  --stored-reference <yes|no>
                       also run ocpp-rpc answering MeterValues once committed to SQLite, as the
                       broker does: the reference the target is judged against (default yes)
  --help               this text`;

/** Returns null when --help was asked for. */
export function parseOcppOptions(argv: readonly string[]): OcppBenchOptions | null {
  const values = parseFlags(argv, {
    rounds: '3',
    warmup: '1',
    duration: '5',
    'charge-points': '1000',
    'stored-reference': 'yes',
  });
  if (values === null) return null;
  const stored = values['stored-reference'];
  if (stored !== 'yes' && stored !== 'no') throw new UsageError('--stored-reference: yes or no');
  return {
    rounds: integer('--rounds', values.rounds, 1, 50),
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    chargePoints: integer('--charge-points', values['charge-points'], 1, 15_000),
    servers: stored === 'yes' ? ['broker', 'ocpp-rpc', 'ocpp-rpc+sqlite'] : ['broker', 'ocpp-rpc'],
  };
}

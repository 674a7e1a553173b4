import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly concurrency: number;
  readonly rounds: number;
  /** Distinct tokens (and keys) cycled by the load loops. */
  readonly tokens: number;
  /** How the broker verifies them: an HS256 secret, or ES256 keys fetched from a JWKS URL. */
  readonly keys: 'secret' | 'jwks';
  /** Whether a third server runs: the broker with one application handshake guard. */
  readonly guard: boolean;
}

export const USAGE = `Usage: node dist/apps/bench/src/main.js [handshake] [options]

Handshakes per second and latency of a bare ws server and of the broker, alternating rounds.
Other benchmarks: main.js graphql --help, main.js wamp --help, main.js cluster --help.

  --duration <s>     measured seconds per round (default 5)
  --warmup <s>       unmeasured seconds before each round (default 1)
  --concurrency <n>  concurrent connect/handshake/close loops (default 50)
  --rounds <n>       rounds per server (default 3)
  --tokens <n>       distinct JWTs cycled by the clients (default 1024); more than the
                     broker's jwt.verifiedCacheSize (4096) makes every signature check a miss
  --keys <kind>      secret (HS256, default) or jwks (ES256 tokens, the broker's jwt.jwksUrl
                     served by the load process, fetched once at boot)
  --guard <on|off>   on: a third server, the broker with one application handshake guard
                     (a tenant rule over an injected service), to list what a guard costs
  --help             this text`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Parses `--name value` flags, each with its default as text; returns null when --help was asked
 * for. Unknown flags and positionals are usage errors.
 */
export function parseFlags<Name extends string>(
  argv: readonly string[],
  defaults: Readonly<Record<Name, string>>,
): Record<Name, string> | null {
  const options: Record<string, { type: 'string'; default: string } | { type: 'boolean'; default: boolean }> =
    { help: { type: 'boolean', default: false } };
  for (const [name, value] of Object.entries<string>(defaults)) {
    options[name] = { type: 'string', default: value };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values['help'] === true) return null;
  const result: Record<string, string> = {};
  for (const name of Object.keys(defaults)) result[name] = String(values[name]);
  return result as Record<Name, string>;
}

/** Returns null when --help was asked for. */
export function parseOptions(argv: readonly string[]): BenchOptions | null {
  const values = parseFlags(argv, {
    duration: '5',
    warmup: '1',
    concurrency: '50',
    rounds: '3',
    tokens: '1024',
    keys: 'secret',
    guard: 'off',
  });
  if (values === null) return null;
  return {
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    concurrency: integer('--concurrency', values.concurrency, 1, 1000),
    rounds: integer('--rounds', values.rounds, 1, 50),
    tokens: integer('--tokens', values.tokens, 1, 100_000),
    keys: keyKind(values.keys),
    guard: onOff('--guard', values.guard),
  };
}

function keyKind(text: string): 'secret' | 'jwks' {
  if (text === 'secret' || text === 'jwks') return text;
  throw new UsageError(`--keys: expected secret or jwks, got "${text}"`);
}

function onOff(flag: string, text: string): boolean {
  if (text === 'on' || text === 'off') return text === 'on';
  throw new UsageError(`${flag}: expected on or off, got "${text}"`);
}

export function seconds(flag: string, text: string, min: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > 600) {
    throw new UsageError(`${flag}: expected seconds between ${min} and 600, got "${text}"`);
  }
  return value;
}

export function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`${flag}: expected an integer between ${min} and ${max}, got "${text}"`);
  }
  return value;
}

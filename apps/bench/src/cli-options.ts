import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly concurrency: number;
  readonly rounds: number;
}

export const USAGE = `Usage: node dist/apps/bench/src/main.js [options]

Handshakes per second and latency of a bare ws server and of the broker, alternating rounds.

  --duration <s>     measured seconds per round (default 5)
  --warmup <s>       unmeasured seconds before each round (default 1)
  --concurrency <n>  concurrent connect/handshake/close loops (default 50)
  --rounds <n>       rounds per server (default 3)
  --help             this text`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Returns null when --help was asked for. */
export function parseOptions(argv: readonly string[]): BenchOptions | null {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        duration: { type: 'string', default: '5' },
        warmup: { type: 'string', default: '1' },
        concurrency: { type: 'string', default: '50' },
        rounds: { type: 'string', default: '3' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return null;
  return {
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    concurrency: integer('--concurrency', values.concurrency, 1, 1000),
    rounds: integer('--rounds', values.rounds, 1, 50),
  };
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

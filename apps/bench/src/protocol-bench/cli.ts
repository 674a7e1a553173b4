import { parseArgs } from 'node:util';
import { UsageError } from '../cli-options.js';

/**
 * Parses `--name value` flags with string defaults (plus --help); unknown flags and positionals are
 * a UsageError. Returns null when --help was asked for.
 */
export function parseFlags<K extends string>(
  argv: readonly string[],
  defaults: Record<K, string>,
): Record<K, string> | null {
  const options: Record<string, { type: 'string'; default: string } | { type: 'boolean'; default: boolean }> =
    { help: { type: 'boolean', default: false } };
  for (const [name, value] of Object.entries<string>(defaults))
    options[name] = { type: 'string', default: value };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return values['help'] === true ? null : (values as Record<K, string>);
}

/**
 * A benchmark's entry point: options (usage errors exit 2, --help prints the usage), then the run;
 * any failure is printed with its stack and exits 1, so a broken run never looks like a result.
 */
export function runCli<T>(
  argv: readonly string[],
  parse: (argv: readonly string[]) => T | null,
  usage: string,
  run: (options: T) => Promise<void>,
): void {
  let options: T | null;
  try {
    options = parse(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${usage}`);
    process.exitCode = 2;
    return;
  }
  if (options === null) {
    console.log(usage);
    return;
  }
  run(options).catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  });
}

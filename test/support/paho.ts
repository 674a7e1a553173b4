import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The script stays in the source tree: tsc does not copy it to dist.
const script = fileURLToPath(new URL('../../../test/support/paho_scenario.py', import.meta.url));

// Debian's interpreter, which sees the Debian package (a pyenv python3 earlier on PATH would not).
const DEBIAN_PYTHON = '/usr/bin/python3';

/** What paho_scenario.py checks, in its order. */
export const PAHO_CHECKS = ['pubsub', 'qos2', 'retained', 'will', 'session'];

/**
 * Runs paho_scenario.py (Debian's python3-paho-mqtt) against the broker on `port`, its clients spread
 * over `otherPort` too when given; resolves with its exit code and output, and the checks that passed.
 */
export function runPaho(
  port: number,
  version: '311' | '5',
  otherPort?: number,
): Promise<{ code: number; output: string; checks: (string | undefined)[] }> {
  const args = [script, String(port), version, ...(otherPort === undefined ? [] : [String(otherPort)])];
  return new Promise((resolve) => {
    execFile(DEBIAN_PYTHON, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      const checks = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { check?: string }).check)
        .filter((check) => check !== undefined);
      resolve({ code, output: stdout + stderr, checks });
    });
  });
}

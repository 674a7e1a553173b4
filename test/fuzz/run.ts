import fc from 'fast-check';
import { TARGETS } from './targets.js';

/**
 * `npm run fuzz [-- <runs> [<target name part>]]`: the long mode, by hand (a million inputs per
 * target by default); prints the seed and the counterexample of any failure.
 */
const runs = Number(process.argv[2] ?? 1_000_000);
const only = process.argv[3];
let failed = false;
for (const target of TARGETS.filter((t) => only === undefined || t.name.includes(only))) {
  const started = performance.now();
  const result = await fc.check(target.property(), { numRuns: runs });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (result.failed) {
    failed = true;
    process.stdout.write(
      `FAIL ${target.name}: seed ${result.seed}, path ${result.counterexamplePath}\n  ${String(result.errorInstance)}\n  counterexample: ${JSON.stringify(result.counterexample)?.slice(0, 500)}\n`,
    );
  } else {
    process.stdout.write(`ok   ${target.name}: ${result.numRuns} inputs in ${seconds} s\n`);
  }
}
process.exitCode = failed ? 1 : 0;

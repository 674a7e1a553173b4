import fc from 'fast-check';
import { TARGETS } from './targets.js';

/**
 * `npm run fuzz [-- <runs> [<target name part>]]`: the long mode, by hand (a million inputs per
 * target by default); prints the seed and the counterexample of any failure, and each target's heap
 * growth: what is still reachable after a full collection, compared with before the target ran.
 */
const runs = Number(process.argv[2] ?? 1_000_000);
/** More heap than this kept after a target's run is a leak (bounded caches stay far below it). */
const MAX_HEAP_GROWTH_MIB = 16;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (npm run fuzz does)');
const heapMiB = (): number => {
  gc();
  return process.memoryUsage().heapUsed / (1024 * 1024);
};
const only = process.argv[3];
let failed = false;
for (const target of TARGETS.filter((t) => only === undefined || t.name.includes(only))) {
  const heapBefore = heapMiB();
  const started = performance.now();
  const result = await fc.check(target.property(), { numRuns: runs });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const growth = heapMiB() - heapBefore;
  if (result.failed) {
    failed = true;
    process.stdout.write(
      `FAIL ${target.name}: seed ${result.seed}, path ${result.counterexamplePath}\n  ${String(result.errorInstance)}\n  counterexample: ${JSON.stringify(result.counterexample)?.slice(0, 500)}\n`,
    );
  } else if (growth > MAX_HEAP_GROWTH_MIB) {
    failed = true;
    process.stdout.write(
      `FAIL ${target.name}: the heap kept ${growth.toFixed(1)} MiB more after ${result.numRuns} inputs\n`,
    );
  } else {
    process.stdout.write(
      `ok   ${target.name}: ${result.numRuns} inputs in ${seconds} s, heap ${growth >= 0 ? '+' : ''}${growth.toFixed(2)} MiB\n`,
    );
  }
}
process.exitCode = failed ? 1 : 0;

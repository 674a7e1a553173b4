import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Pins a process, every thread of it, to one CPU (util-linux's taskset; Node has no call for it), so
 * that a server under test and its load generator do not take turns on the same core. False where
 * it cannot be done (too few CPUs, no taskset): the caller says so in its report.
 */
export function pinToCpu(pid: number, cpu: number): boolean {
  if (cpu >= availableParallelism()) return false;
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(cpu), String(pid)], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

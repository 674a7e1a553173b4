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

/**
 * Runs a process only when its CPU has nothing else to run (Linux's SCHED_IDLE, through util-linux's
 * chrt), so that a process sharing its core is never kept waiting for it: a nice level only shares
 * the core out unevenly, and the one waiting still waits for a scheduler slice. False where it cannot
 * be done.
 */
export function runWhenIdle(pid: number): boolean {
  try {
    execFileSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

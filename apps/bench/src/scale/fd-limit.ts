import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { FD_HEADROOM } from './scale-options.js';

/**
 * The open-files limit a server would get, and a check of it: a server that runs out of descriptors
 * refuses connections (or worse), which would read as the broker's failure. The run stops at once
 * rather than quietly measuring fewer connections than asked for.
 */

/** The soft RLIMIT_NOFILE a child process of this one starts with (`ulimit -n` in a shell). */
export function childFdLimit(): number {
  const text = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return text === 'unlimited' ? Infinity : Number(text);
}

/** The soft "Max open files" of a running process, from /proc/<pid>/limits. */
export function processFdLimit(pid: number): number {
  return parseOpenFilesLimit(readFileSync(`/proc/${pid}/limits`, 'utf8'));
}

export function parseOpenFilesLimit(limits: string): number {
  const match = /^Max open files\s+(\S+)/m.exec(limits);
  if (match === null) throw new Error('no "Max open files" line in /proc/<pid>/limits');
  return match[1] === 'unlimited' ? Infinity : Number(match[1]);
}

/** Throws unless `who`, with `limit` descriptors, can hold `connections` plus the headroom. */
export function checkFdLimit(connections: number, limit: number, who: string): void {
  if (connections + FD_HEADROOM <= limit) return;
  throw new Error(
    `${who} may open ${limit} files (RLIMIT_NOFILE, "Max open files" soft limit), fewer than ` +
      `--connections ${connections} + ${FD_HEADROOM}: raise the limit (ulimit -n, as far as the hard ` +
      `limit allows) or lower the flag, e.g. --connections ${Math.max(2, limit - FD_HEADROOM - 1500)}`,
  );
}

import { readFileSync } from 'node:fs';

/** Resident set size of another process in KiB, from the VmRSS line of /proc/<pid>/status. */
export function processRssKiB(pid: number): number {
  return parseVmRss(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

export function parseVmRss(status: string): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error('no VmRSS line in /proc/<pid>/status');
  return Number(match[1]);
}

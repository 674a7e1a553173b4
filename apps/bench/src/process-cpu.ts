import { readFileSync } from 'node:fs';

/** /proc reports times in USER_HZ, which Linux fixes at 100 for userspace. */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU time of another process in milliseconds, from /proc/<pid>/stat; null where
 * there is no /proc (the table then shows n/a instead of failing the run).
 */
export function processCpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the parenthesised command name, which may itself contain spaces: state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

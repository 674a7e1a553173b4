import { hostname } from 'node:os';

/** The default node id: host name and port, or the process id when the port is chosen by the system. */
export function defaultNodeId(port: number): string {
  const host = hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40);
  return port === 0 ? `${host}-pid${process.pid}` : `${host}-${port}`;
}

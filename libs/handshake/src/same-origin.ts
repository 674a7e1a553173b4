import { normalizeOrigin } from './match-origin.js';

/**
 * The default when an endpoint lists no origins (as Gorilla's CheckOrigin does): a browser page may
 * only connect to the host that served it, i.e. the Origin's host[:port] equals the Host header.
 */
export function isSameOrigin(origin: string, host: string): boolean {
  const normalized = normalizeOrigin(origin);
  if (normalized === null || normalized === 'null') return false;
  const sep = normalized.indexOf('://');
  const scheme = normalized.slice(0, sep);
  const originHost = normalized.slice(sep + 3);
  const defaultPort = scheme === 'https' || scheme === 'wss' ? ':443' : ':80';
  let target = host.trim().toLowerCase();
  if (target.endsWith(defaultPort)) target = target.slice(0, -defaultPort.length);
  return originHost === target;
}

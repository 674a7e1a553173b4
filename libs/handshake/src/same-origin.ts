import { normalizeOrigin } from './match-origin.js';

/**
 * The default when an endpoint lists no origins (as Gorilla's CheckOrigin does): a browser page may
 * only connect to the host that served it, over the same kind of transport: the Origin equals
 * http(s)://<Host>, compared in normalized form (case, default ports).
 */
export function isSameOrigin(origin: string, host: string, secure: boolean): boolean {
  const normalized = normalizeOrigin(origin);
  if (normalized === null || normalized === 'null') return false;
  return normalized === normalizeOrigin(`${secure ? 'https' : 'http'}://${host.trim()}`);
}

import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type ConnectionRegistry } from '../connections/connection-registry.js';

const BODY = JSON.stringify({
  type: 'about:blank',
  status: 503,
  title: 'Shutting down',
  detail: 'This node is shutting down; try again shortly or another node.',
});

/**
 * While the node drains, a plain HTTP request (an admin client on a keep-alive connection, say) gets
 * 503 and Connection: close instead of being served, so no client keeps the node past its drain.
 */
export function refuseWhileDraining(connections: ConnectionRegistry) {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (!connections.draining) return next();
    res.shouldKeepAlive = false;
    res
      .writeHead(503, {
        'Content-Type': 'application/problem+json',
        'Content-Length': Buffer.byteLength(BODY),
        'Retry-After': '1',
        Connection: 'close',
      })
      .end(BODY);
  };
}

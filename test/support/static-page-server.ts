import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StaticPageServer {
  readonly port: number;
  /** The Origin a browser sends for pages served here: `http://127.0.0.1:<port>`. */
  readonly origin: string;
  close(): Promise<void>;
}

/** A page route: either fixed HTML or a handler that writes the whole response itself. */
export type PageRoute = string | ((req: IncomingMessage, res: ServerResponse) => void);

/**
 * Serves a few fixed routes (keyed by pathname, query ignored) from a plain node:http server on
 * 127.0.0.1, ephemeral port. Anything else is a 404. Pages are sent with `Cache-Control: no-store`
 * so a browser reloading them always hits the server.
 */
export async function startStaticPageServer(
  routes: Readonly<Record<string, PageRoute>>,
): Promise<StaticPageServer> {
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const route = routes[pathname];
    if (route === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    if (typeof route === 'function') {
      route(req, res);
      return;
    }
    res
      .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' })
      .end(route);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

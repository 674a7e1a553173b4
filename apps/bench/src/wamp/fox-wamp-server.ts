import { createRequire } from 'node:module';
import { portFromEnv } from '../server-port.js';

/** The part of fox-wamp's router (CommonJS, no type declarations) the reference uses. */
interface FoxRouter {
  listenWAMP(options: { host: string; port: number }): unknown;
}

/**
 * The reference: fox-wamp 0.7.28, another WAMP router for Node, serving WAMP over WebSocket
 * (wamp.2.json) in its own process. Its realms are created on first use, so realm1 needs no setup;
 * its trace logging is off by default, like the broker's per-message logging.
 */
const port = portFromEnv('fox-wamp-server');
const FoxRouterClass = createRequire(import.meta.url)('fox-wamp') as new () => FoxRouter;
new FoxRouterClass().listenWAMP({ host: '127.0.0.1', port });

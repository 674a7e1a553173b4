import { WebSocketServer } from 'ws';
import { portFromEnv } from './server-port.js';

/**
 * The reference: a bare `ws` server with no checks, run as its own process by the benchmark.
 * Like the broker's chat.v1 module it picks chat.v1 and sends one small welcome message.
 */
const port = portFromEnv('bare-ws-server');

const wss = new WebSocketServer({ host: '127.0.0.1', port, handleProtocols: () => 'chat.v1' });
wss.on('connection', (ws) => {
  // ws only emits errors for protocol violations; the reference must not crash on one.
  ws.on('error', () => ws.terminate());
  ws.send(JSON.stringify({ type: 'welcome', user: 'bench' }));
});

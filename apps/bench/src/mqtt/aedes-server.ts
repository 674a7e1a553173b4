import { Aedes } from 'aedes';
import { createWebSocketStream, WebSocketServer } from 'ws';

/**
 * The Aedes reference, run as its own process by the MQTT benchmark: the WebSocket setup of Aedes's
 * own example (a ws WebSocketServer, each connection handed to aedes.handle as a stream).
 */
const port = Number(process.env['PORT']);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('aedes-server: set PORT to a free port\n');
  process.exit(2);
}

const aedes = await Aedes.createBroker();
const wss = new WebSocketServer({
  host: '127.0.0.1',
  port,
  handleProtocols: (offered) => (offered.has('mqtt') ? 'mqtt' : false),
});
wss.on('connection', (ws) => {
  const stream = createWebSocketStream(ws);
  // A client that goes away mid-write must not crash the reference.
  stream.on('error', () => ws.terminate());
  aedes.handle(stream);
});

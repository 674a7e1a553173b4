import { RPCServer } from 'ocpp-rpc';
import { MeterValueStore, type MeterValuesParams } from './meter-value-store.js';

/**
 * The reference, run as its own process by the OCPP benchmark: ocpp-rpc's own RPCServer in strict
 * mode (every CALL and every answer checked against the OCPP 1.6 schemas, as our module does),
 * answering BootNotification, Heartbeat and MeterValues as our central system does, minus the store.
 * With STORE set to a file path, MeterValues are answered once committed there (the stored reference).
 */
const port = Number(process.env['PORT']);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('ocpp-rpc-server: set PORT to a free port\n');
  process.exit(2);
}

const storePath = process.env['STORE'];
const store = storePath === undefined ? null : new MeterValueStore(storePath);

const server = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
server.on('client', (client) => {
  client.handle('BootNotification', () => ({
    status: 'Accepted',
    interval: 300,
    currentTime: new Date().toISOString(),
  }));
  client.handle('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
  client.handle('MeterValues', async ({ params }: { params: MeterValuesParams }) => {
    await store?.add(client.identity, params);
    return {};
  });
});
await server.listen(port, '127.0.0.1');

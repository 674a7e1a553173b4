import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { connect, nextEvent } from './support/mqtt-helpers.js';
import { BOOT, chargePoint } from './support/ocpp.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { openAutobahn } from './support/wamp-clients.js';
import { waitFor } from './support/ws-helpers.js';

interface Listed {
  readonly subprotocol: string;
  readonly principal: string | null;
}

/**
 * Modules that authenticate in their own first message tell the gateway who connected: the admin
 * API lists them, and their credential's expiry closes the connection like a handshake credential's.
 */
describe('who is connected, when a module authenticated the connection itself', () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;

  before(async () => {
    broker = await startDefaultBroker({ mqtt: { sysIntervalSec: 0 } });
    api = request(broker.url.replace(/^ws/, 'http'));
  });
  after(() => broker.close());

  const listed = async (): Promise<Listed[]> =>
    (await api.get('/admin/v1/connections').expect(200)).body as Listed[];

  it('lists the MQTT username, the WAMP authid and the OCPP identity as principals', async () => {
    await api
      .post('/admin/v1/credentials/passwords')
      .send({ name: 'meter', username: 'meter-9', password: 'meter-9-password' })
      .expect(201);
    const device = await connect(broker, { username: 'meter-9', password: 'meter-9-password' });
    const wamp = await openAutobahn(`${broker.url}/ws`, {
      authid: 'meter-9',
      authmethods: ['ticket'],
      onchallenge: () => 'meter-9-password',
    });
    const cp = chargePoint(broker.url, 'CP-who');
    await cp.connect();
    await cp.call('BootNotification', BOOT);

    const byProtocol = Object.fromEntries((await listed()).map((c) => [c.subprotocol, c.principal]));
    assert.deepEqual(
      [byProtocol['mqtt'], byProtocol['wamp.2.json'], byProtocol['ocpp1.6']],
      ['meter-9', 'meter-9', 'CP-who'],
    );
    await device.endAsync();
    wamp.close();
    await cp.close();
  });

  it('closes an MQTT connection when the JWT its CONNECT carried expires', async () => {
    const device = await connect(broker, {
      username: 'x',
      password: await signToken({ sub: 'brief', expiresIn: '2s' }),
    });
    await waitFor(async () => (await listed()).some((c) => c.principal === 'brief'));
    await nextEvent(device, 'close', 8000);
    await device.endAsync();
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { connect, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';
import { type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';

/** A v5 client with a token for `sub` in the query (the endpoint's optional credential). */
async function connectAs(sub: string, clientId: string): Promise<MqttClient> {
  const token = await signToken({ sub });
  return mqtt.connectAsync(`${broker.url}/mqtt?token=${token}`, {
    clientId,
    reconnectPeriod: 0,
    protocolVersion: 5,
  });
}

/** What one SUBSCRIBE of `filters` was granted, per filter, on a raw client of `version` (4: 3.1.1). */
async function granted(version: 4 | 5, filters: readonly string[]): Promise<number[]> {
  const raw = await RawMqtt.connected(`${broker.url}/mqtt`, {
    protocolVersion: version,
    clientId: `raw-${version}`,
  });
  raw.send({ cmd: 'subscribe', messageId: 1, subscriptions: filters.map((topic) => ({ topic, qos: 1 })) });
  const suback = await raw.next('suback');
  raw.ws.close();
  return suback.granted.map((g) => (typeof g === 'number' ? g : (g as { qos: number }).qos));
}

let broker: TestBroker;

describe('mqtt module: the topic rules of the config (authorization)', { timeout: 60_000 }, () => {
  before(async () => {
    broker = await startMqttBroker(
      {},
      { auth: { mode: 'optional', carriers: ['query'] } },
      {
        authorization: {
          noMatch: 'deny',
          rules: [
            // Eclipse Paho's interoperability suite expects this topic to refuse subscriptions.
            { action: 'subscribe', topics: ['test/nosubscribe'], permission: 'deny' },
            { who: 'anonymous', action: 'publish', topics: ['#'], permission: 'deny' },
            { topics: ['devices/%c/#'], permission: 'allow' },
            { user: 'alice', topics: ['alice/#'], permission: 'allow' },
            { action: 'subscribe', topics: ['#'], permission: 'allow' },
          ],
        },
      },
    );
  });
  after(() => broker.close());

  it('test/nosubscribe refuses subscriptions (SUBACK 0x80 in 3.1.1, 0x87 in 5); other filters are granted', async () => {
    assert.deepEqual(await granted(4, ['test/nosubscribe', 'test/other']), [0x80, 1]);
    assert.deepEqual(await granted(5, ['test/nosubscribe', 'test/other']), [0x87, 1]);
  });

  it('anonymous clients may not publish, even in their own tree: PUBACK 0x87 in 5, dropped in 3.1.1', async () => {
    const watcher = await connect(broker, { clientId: 'watcher' });
    await watcher.subscribeAsync('devices/#', { qos: 1 });
    const seen: string[] = [];
    const allowedArrived = new Promise<void>((resolve) =>
      watcher.on('message', (topic) => {
        seen.push(topic);
        if (topic === 'devices/dev-9/state') resolve();
      }),
    );
    const anonymous = await connect(broker, { clientId: 'anon-1' });
    await assert.rejects(anonymous.publishAsync('devices/anon-1/state', 'x', { qos: 1 }), { code: 0x87 });
    await anonymous.endAsync();
    const old = await connect(broker, { clientId: 'anon-2', protocolVersion: 4 });
    await old.publishAsync('devices/anon-2/state', 'x', { qos: 1 });
    await old.endAsync();
    // An authenticated client in its own tree is allowed; what the watcher got before it is all it got.
    const device = await connectAs('bob', 'dev-9');
    await device.publishAsync('devices/dev-9/state', 'ok', { qos: 1 });
    await allowedArrived;
    assert.deepEqual(seen, ['devices/dev-9/state']);
    await device.endAsync();
    await watcher.endAsync();
  });

  it('%c gives each authenticated client its own tree, a user rule its own; nothing else (noMatch: deny)', async () => {
    const alice = await connectAs('alice', 'alice-phone');
    await alice.publishAsync('devices/alice-phone/state', '1', { qos: 1 });
    await alice.publishAsync('alice/notes', '1', { qos: 1 });
    await assert.rejects(alice.publishAsync('devices/other/state', '1', { qos: 1 }), { code: 0x87 });
    await assert.rejects(alice.publishAsync('elsewhere', '1', { qos: 1 }), { code: 0x87 });
    await alice.endAsync();
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { type TestBroker } from './support/test-broker.js';
import { connect, Inbox, startMqttBroker } from './support/mqtt-helpers.js';
import mqttPacket from 'mqtt-packet';
import { RawMqtt } from './support/raw-mqtt.js';
import { refusedStatus } from './support/ws-helpers.js';

describe('mqtt module: core publish/subscribe over ws:// with MQTT.js', { timeout: 60_000 }, () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startMqttBroker();
  });
  after(() => broker.close());

  it('refuses a handshake that does not offer mqtt (400)', async () => {
    const ws = new WebSocket(`${broker.url}/mqtt`, 'chat.v1');
    assert.equal(await refusedStatus(ws), 400);
  });

  it('reads several packets from one frame and one packet from several frames', async () => {
    const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
    const encode = (packet: mqttPacket.Packet): Buffer => mqttPacket.generate(packet, { protocolVersion: 5 });
    raw.sendBytes(
      Buffer.concat([
        encode({ cmd: 'connect', protocolVersion: 5, clientId: 'framing', clean: true, keepalive: 0 }),
        encode({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'framing', qos: 0 }] }),
      ]),
    );
    await raw.next('connack');
    await raw.next('suback');
    const publish = encode({
      cmd: 'publish',
      topic: 'framing',
      payload: Buffer.from('split'),
      qos: 0,
      retain: false,
      dup: false,
    });
    raw.sendBytes(publish.subarray(0, 3));
    raw.sendBytes(publish.subarray(3));
    assert.equal(String((await raw.next('publish')).payload), 'split');
    raw.send({ cmd: 'disconnect' });
  });

  it('v3.1 (MQIsdp) over the mqttv3.1 subprotocol shares the broker with 3.1.1 and 5 clients', async () => {
    const old = await connect(broker, { protocolVersion: 3, protocolId: 'MQIsdp', clientId: 'old-device' });
    const inbox = new Inbox(old);
    await old.subscribeAsync('legacy/#', { qos: 1 });
    const modern = await connect(broker, { protocolVersion: 5 });
    await modern.publishAsync('legacy/news', 'hello 3.1', { qos: 1 });
    assert.equal((await inbox.wait(1))[0]?.payload, 'hello 3.1');
    await Promise.all([old.endAsync(), modern.endAsync()]);
  });

  it('v3.1 refuses a client id longer than 23 characters (return code 2)', async () => {
    await assert.rejects(
      connect(broker, { protocolVersion: 3, protocolId: 'MQIsdp', clientId: 'x'.repeat(24) }),
      /Identifier rejected/,
    );
  });

  for (const protocolVersion of [4, 5] as const) {
    it(`v${protocolVersion === 4 ? '3.1.1' : '5'}: QoS 0, 1 and 2 both ways`, async () => {
      const sub = await connect(broker, { protocolVersion, clientId: `sub-${protocolVersion}` });
      const pub = await connect(broker, { protocolVersion, clientId: `pub-${protocolVersion}` });
      const inbox = new Inbox(sub);
      const granted = await sub.subscribeAsync(`qos/${protocolVersion}/+`, { qos: 2 });
      assert.equal(granted[0]?.qos, 2);
      await pub.publishAsync(`qos/${protocolVersion}/zero`, 'q0', { qos: 0 });
      await pub.publishAsync(`qos/${protocolVersion}/one`, 'q1', { qos: 1 });
      await pub.publishAsync(`qos/${protocolVersion}/two`, 'q2', { qos: 2 });
      const got = await inbox.wait(3);
      assert.deepEqual(
        got.map((m) => [m.topic, m.payload, m.packet.qos]),
        [
          [`qos/${protocolVersion}/zero`, 'q0', 0],
          [`qos/${protocolVersion}/one`, 'q1', 1],
          [`qos/${protocolVersion}/two`, 'q2', 2],
        ],
      );
      await sub.unsubscribeAsync(`qos/${protocolVersion}/+`);
      await pub.publishAsync(`qos/${protocolVersion}/one`, 'after', { qos: 1 });
      await sub.subscribeAsync(`qos/${protocolVersion}/marker`, { qos: 1 });
      await pub.publishAsync(`qos/${protocolVersion}/marker`, 'marker', { qos: 1 });
      const after = await inbox.wait(4);
      assert.equal(after[3]?.payload, 'marker', 'nothing arrived after UNSUBSCRIBE');
      await Promise.all([sub.endAsync(), pub.endAsync()]);
    });
  }

  it('v3.1.1 has no receive maximum: a burst of 100 QoS 2 publishes all complete', async () => {
    // The 32 of mqtt.receiveMaximum is announced in a 5.0 CONNACK only; a 3.1.1 client is never told of it.
    const pub = await connect(broker, { protocolVersion: 4 });
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => pub.publishAsync('burst/q2', String(i), { qos: 2 })),
    );
    assert.equal(pub.connected, true);
    await pub.endAsync();
  });
});

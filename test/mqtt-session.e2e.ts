import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TestBroker } from './support/test-broker.js';
import { connect, connectWithInbox, Inbox, nextEvent, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';

describe('mqtt module: retained messages, wills and sessions', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let url: string;

  before(async () => {
    broker = await startMqttBroker({ maxQueuedMessages: 3 });
    url = `${broker.url}/mqtt`;
  });
  after(() => broker.close());

  for (const protocolVersion of [4, 5] as const) {
    it(`v${protocolVersion}: a retained message reaches later subscribers; an empty one clears it`, async () => {
      const topic = `retained/${protocolVersion}`;
      const pub = await connect(broker, { protocolVersion });
      await pub.publishAsync(topic, 'kept', { qos: 1, retain: true });
      const first = await connect(broker, { protocolVersion });
      const inbox = new Inbox(first);
      await first.subscribeAsync(topic, { qos: 1 });
      const [got] = await inbox.wait(1);
      assert.equal(got?.payload, 'kept');
      assert.equal(got?.packet.retain, true);

      await pub.publishAsync(topic, '', { qos: 1, retain: true });
      const second = await connect(broker, { protocolVersion });
      const secondInbox = new Inbox(second);
      await second.subscribeAsync(topic, { qos: 1 });
      await pub.publishAsync(topic, 'live', { qos: 1 });
      const [live] = await secondInbox.wait(1);
      assert.equal(live?.payload, 'live', 'the cleared retained message is not replayed');
      assert.equal(live?.packet.retain, false);
      await Promise.all([pub.endAsync(), first.endAsync(), second.endAsync()]);
    });

    it(`v${protocolVersion}: the will goes out when the connection drops, not on DISCONNECT`, async () => {
      const watcher = await connect(broker, { protocolVersion });
      const inbox = new Inbox(watcher);
      await watcher.subscribeAsync(`will/${protocolVersion}/#`, { qos: 1 });
      const polite = await connect(broker, {
        protocolVersion,
        will: {
          topic: `will/${protocolVersion}/polite`,
          payload: Buffer.from('gone'),
          qos: 1,
          retain: false,
        },
      });
      await polite.endAsync();
      const rude = await connect(broker, {
        protocolVersion,
        will: { topic: `will/${protocolVersion}/rude`, payload: Buffer.from('lost'), qos: 1, retain: false },
      });
      rude.stream.destroy();
      const [will] = await inbox.wait(1);
      assert.deepEqual([will?.topic, will?.payload], [`will/${protocolVersion}/rude`, 'lost']);
      await watcher.endAsync();
      assert.equal(inbox.received.length, 1);
    });
  }

  it('v3.1.1 persistent session: offline QoS 1 messages are queued and delivered on return', async () => {
    const options = { protocolVersion: 4 as const, clientId: 'persistent-311', clean: false };
    const first = await connect(broker, options);
    await first.subscribeAsync('offline/311', { qos: 1 });
    await first.endAsync();
    const pub = await connect(broker);
    await pub.publishAsync('offline/311', 'while away', { qos: 1 });
    const { client: back, inbox } = await connectWithInbox(broker, options);
    const [got] = await inbox.wait(1);
    assert.equal(got?.payload, 'while away');
    await Promise.all([back.endAsync(), pub.endAsync()]);
  });

  it('the offline queue keeps the newest messages and drops the oldest past its bound', async () => {
    const options = {
      protocolVersion: 5 as const,
      clientId: 'bounded',
      clean: false,
      properties: { sessionExpiryInterval: 60 },
    };
    const first = await connect(broker, options);
    await first.subscribeAsync('bounded', { qos: 1 });
    await first.endAsync();
    const pub = await connect(broker);
    for (let i = 1; i <= 5; i++) await pub.publishAsync('bounded', `m${i}`, { qos: 1 });
    const { client: back, inbox } = await connectWithInbox(broker, options);
    const got = await inbox.wait(3);
    assert.deepEqual(
      got.map((m) => m.payload),
      ['m3', 'm4', 'm5'],
    );
    await Promise.all([back.endAsync(), pub.endAsync()]);
  });

  it('v5 clean start with session expiry 0 ends the session with the connection', async () => {
    const options = { protocolVersion: 5 as const, clientId: 'short-lived' };
    const first = await connect(broker, options);
    await first.subscribeAsync('short-lived', { qos: 1 });
    await first.endAsync();
    const back = await connect(broker, { ...options, clean: false });
    assert.equal(back.connected, true);
    const pub = await connect(broker);
    const inbox = new Inbox(back);
    await pub.publishAsync('short-lived', 'nobody', { qos: 1 });
    await pub.publishAsync('short-lived-check', 'x', { qos: 0 });
    await back.subscribeAsync('short-lived-check');
    await pub.publishAsync('short-lived-check', 'y', { qos: 0 });
    const [only] = await inbox.wait(1);
    assert.equal(only?.payload, 'y', 'the old subscription did not survive');
    await Promise.all([back.endAsync(), pub.endAsync()]);
  });

  it('an unacknowledged QoS 1 delivery is resent with DUP when the session resumes', async () => {
    const connectPacket = { protocolVersion: 4 as const, clientId: 'redeliver', clean: false };
    const raw = await RawMqtt.connected(url, connectPacket);
    raw.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'redeliver', qos: 1 }] });
    await raw.next('suback');
    const pub = await connect(broker);
    await pub.publishAsync('redeliver', 'again', { qos: 1 });
    const first = await raw.next('publish');
    assert.equal(first.dup, false);
    raw.ws.close();
    await raw.closed();
    const back = await RawMqtt.open(url, 4);
    back.send({ cmd: 'connect', ...connectPacket, keepalive: 0 });
    const connack = await back.next('connack');
    assert.equal(connack.sessionPresent, true);
    const again = await back.next('publish');
    assert.deepEqual([again.dup, again.messageId, String(again.payload)], [true, first.messageId, 'again']);
    back.send({ cmd: 'puback', messageId: again.messageId as number });
    back.send({ cmd: 'disconnect' });
    await pub.endAsync();
  });

  it('v5: a second connection with the same client id takes over, the first hears 0x8E', async () => {
    const first = await connect(broker, { clientId: 'taken' });
    const disconnected = nextEvent<[{ reasonCode?: number }]>(first, 'disconnect');
    const second = await connect(broker, { clientId: 'taken' });
    const [packet] = await disconnected;
    assert.equal(packet.reasonCode, 0x8e);
    assert.equal(second.connected, true);
    await second.endAsync();
    first.end(true);
  });
});

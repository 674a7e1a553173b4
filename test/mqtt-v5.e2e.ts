import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TestBroker } from './support/test-broker.js';
import { connect, connectWithInbox, Inbox, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';

describe('mqtt module: MQTT 5 features with MQTT.js', { timeout: 60_000 }, () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startMqttBroker();
  });
  after(() => broker.close());

  it('CONNACK announces the limits and assigns a client id to an empty one', async () => {
    const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
    raw.send({ cmd: 'connect', protocolVersion: 5, clientId: '', clean: true, keepalive: 0 });
    const connack = await raw.next('connack');
    assert.match(connack.properties?.assignedClientIdentifier ?? '', /^auto-/);
    assert.equal(connack.properties?.receiveMaximum, 32);
    assert.equal(connack.properties?.topicAliasMaximum, 32);
    assert.equal(connack.properties?.sharedSubscriptionAvailable, true);
    raw.send({ cmd: 'disconnect' });
  });

  it('a shared subscription delivers each message to one member, round robin', async () => {
    const a = await connect(broker);
    const b = await connect(broker);
    const inboxA = new Inbox(a);
    const inboxB = new Inbox(b);
    await a.subscribeAsync('$share/workers/jobs/+', { qos: 1 });
    await b.subscribeAsync('$share/workers/jobs/+', { qos: 1 });
    const pub = await connect(broker);
    for (let i = 0; i < 4; i++) await pub.publishAsync('jobs/x', `job${i}`, { qos: 1 });
    await inboxA.wait(2);
    await inboxB.wait(2);
    assert.equal(inboxA.received.length + inboxB.received.length, 4);
    await Promise.all([a.endAsync(), b.endAsync(), pub.endAsync()]);
  });

  it('no-local keeps a client from hearing its own publishes', async () => {
    const self = await connect(broker);
    const other = await connect(broker);
    const inbox = new Inbox(self);
    await self.subscribeAsync('nl/topic', { qos: 1, nl: true });
    await self.publishAsync('nl/topic', 'mine', { qos: 1 });
    await other.publishAsync('nl/topic', 'theirs', { qos: 1 });
    const [got] = await inbox.wait(1);
    assert.equal(got?.payload, 'theirs');
    await self.publishAsync('nl/after', 'flush', { qos: 1 });
    assert.equal(inbox.received.length, 1);
    await Promise.all([self.endAsync(), other.endAsync()]);
  });

  it('retain handling 1 and 2, and retain-as-published', async () => {
    const pub = await connect(broker);
    await pub.publishAsync('rh/a', 'retained', { qos: 1, retain: true });
    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('rh/+', { qos: 1, rh: 2 });
    await sub.subscribeAsync('rh/a', { qos: 1, rh: 1 });
    await inbox.wait(1);
    await sub.subscribeAsync('rh/a', { qos: 1, rh: 1 });
    await sub.subscribeAsync('rap/#', { qos: 1, rap: true });
    await pub.publishAsync('rap/x', 'flagged', { qos: 1, retain: true });
    const got = await inbox.wait(2);
    assert.deepEqual(
      got.map((m) => [m.topic, m.payload, m.packet.retain]),
      [
        ['rh/a', 'retained', true],
        ['rap/x', 'flagged', true],
      ],
    );
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it('subscription identifiers come back with the messages they matched', async () => {
    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('ids/+', { qos: 0, properties: { subscriptionIdentifier: 7 } });
    await sub.subscribeAsync('ids/#', { qos: 0, properties: { subscriptionIdentifier: 9 } });
    const pub = await connect(broker);
    await pub.publishAsync('ids/one', 'x', { qos: 0 });
    const [got] = await inbox.wait(1);
    const ids = got?.packet.properties?.subscriptionIdentifier;
    assert.deepEqual(Array.isArray(ids) ? [...ids].sort() : ids, [7, 9]);
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it('properties pass through: user properties, content type, response topic, correlation data, expiry', async () => {
    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('props/x', { qos: 1 });
    const pub = await connect(broker);
    await pub.publishAsync('props/x', '{"a":1}', {
      qos: 1,
      properties: {
        userProperties: { trace: 'abc' },
        contentType: 'application/json',
        responseTopic: 'props/reply',
        correlationData: Buffer.from('corr-1'),
        messageExpiryInterval: 60,
        payloadFormatIndicator: true,
      },
    });
    const [got] = await inbox.wait(1);
    const props = got?.packet.properties;
    assert.deepEqual({ ...props?.userProperties }, { trace: 'abc' });
    assert.equal(props?.contentType, 'application/json');
    assert.equal(props?.responseTopic, 'props/reply');
    assert.equal(props?.correlationData?.toString(), 'corr-1');
    assert.ok((props?.messageExpiryInterval ?? 0) > 0 && (props?.messageExpiryInterval ?? 0) <= 60);
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it('topic aliases both ways', async () => {
    const { client: sub, inbox } = await connectWithInbox(broker, { properties: { topicAliasMaximum: 4 } });
    await sub.subscribeAsync('alias/long/topic/name', { qos: 0 });
    const pub = await connect(broker, { autoUseTopicAlias: true });
    await pub.publishAsync('alias/long/topic/name', 'one', { qos: 1 });
    await pub.publishAsync('alias/long/topic/name', 'two', { qos: 1 });
    const got = await inbox.wait(2);
    assert.deepEqual(
      got.map((m) => [m.topic, m.payload]),
      [
        ['alias/long/topic/name', 'one'],
        ['alias/long/topic/name', 'two'],
      ],
    );
    assert.equal(got[0]?.packet.properties?.topicAlias, 1);
    assert.equal(got[1]?.packet.properties?.topicAlias, 1);
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it('a message over the maximum packet size the client announced is not sent to it', async () => {
    const sub = await connect(broker, { properties: { maximumPacketSize: 200 } });
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('mps/x', { qos: 1 });
    const pub = await connect(broker);
    await pub.publishAsync('mps/x', 'x'.repeat(500), { qos: 1 });
    await pub.publishAsync('mps/x', 'small', { qos: 1 });
    const [got] = await inbox.wait(1);
    assert.equal(got?.payload, 'small');
    assert.equal(inbox.received.length, 1);
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it("a reason string that would take a packet over the client's maximum packet size is left out", async () => {
    const raw = await RawMqtt.connected(`${broker.url}/mqtt`, { properties: { maximumPacketSize: 20 } });
    raw.send({ cmd: 'subscribe', messageId: 4, subscriptions: [{ topic: 'a/#/b', qos: 0 }] });
    const suback = await raw.next('suback');
    assert.deepEqual(suback.granted, [0x8f]);
    assert.equal(suback.properties?.reasonString, undefined);
    assert.ok((suback.length ?? 0) + 2 <= 20, `a SUBACK of ${(suback.length ?? 0) + 2} bytes`);
    raw.send({ cmd: 'disconnect' });
  });

  it('receive maximum 0 or maximum packet size 0 in CONNECT: CONNACK 0x82 (3.1.2.11.3, 3.1.2.11.4)', async () => {
    for (const properties of [{ receiveMaximum: 0 }, { maximumPacketSize: 0 }]) {
      const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
      raw.send({
        cmd: 'connect',
        protocolVersion: 5,
        clientId: 'zero',
        clean: true,
        keepalive: 0,
        properties,
      });
      assert.equal((await raw.next('connack')).reasonCode, 0x82, JSON.stringify(properties));
      await raw.closed();
    }
  });

  it("a will's message expiry runs from when it is published, not from CONNECT (3.1.3.2.4)", async () => {
    const dying = await connect(broker, {
      will: {
        topic: 'willexpiry/x',
        payload: Buffer.from('gone'),
        qos: 1,
        retain: true,
        properties: { messageExpiryInterval: 3 },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 2200));
    dying.stream.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // 3.4 s after CONNECT, 1.2 s after the will went out: its retained copy has about 2 s to live.
    const late = await connect(broker);
    const inbox = new Inbox(late);
    await late.subscribeAsync('willexpiry/x', { qos: 1 });
    const [got] = await inbox.wait(1);
    assert.equal(got?.payload, 'gone');
    assert.ok((got?.packet.properties?.messageExpiryInterval ?? 0) >= 1);
    await late.publishAsync('willexpiry/x', '', { qos: 1, retain: true });
    await late.endAsync();
  });

  it('PUBACK says 0x10 when nobody subscribed', async () => {
    const raw = await RawMqtt.connected(`${broker.url}/mqtt`);
    raw.send({
      cmd: 'publish',
      topic: 'nobody/here',
      payload: Buffer.from('x'),
      qos: 1,
      messageId: 3,
      retain: false,
      dup: false,
    });
    const puback = await raw.next('puback');
    assert.deepEqual([puback.messageId, puback.reasonCode], [3, 0x10]);
    raw.send({ cmd: 'disconnect' });
  });

  it('will properties reach the subscribers with the will', async () => {
    const watcher = await connect(broker);
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync('willprops/#', { qos: 1 });
    const dying = await connect(broker, {
      will: {
        topic: 'willprops/x',
        payload: Buffer.from('{"state":"offline"}'),
        qos: 1,
        retain: false,
        properties: {
          contentType: 'application/json',
          userProperties: { device: 'd1' },
          responseTopic: 'willprops/reply',
        },
      },
    });
    dying.stream.destroy();
    const [got] = await inbox.wait(1);
    assert.equal(got?.packet.properties?.contentType, 'application/json');
    assert.deepEqual({ ...got?.packet.properties?.userProperties }, { device: 'd1' });
    assert.equal(got?.packet.properties?.responseTopic, 'willprops/reply');
    await watcher.endAsync();
  });

  it('the will waits for its delay and is cancelled when the client returns', async () => {
    const watcher = await connect(broker);
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync('delayed/#', { qos: 1 });
    const options = {
      clientId: 'delayed-will',
      clean: false,
      properties: { sessionExpiryInterval: 60 },
      will: {
        topic: 'delayed/will',
        payload: Buffer.from('late'),
        qos: 1 as const,
        retain: false,
        properties: { willDelayInterval: 30 },
      },
    };
    const first = await connect(broker, options);
    first.stream.destroy();
    const back = await connect(broker, options);
    await back.publishAsync('delayed/marker', 'back', { qos: 1 });
    const [got] = await inbox.wait(1);
    assert.equal(got?.topic, 'delayed/marker');
    await back.endAsync();
    await watcher.endAsync();
    assert.equal(inbox.received.length, 1);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttClient } from 'mqtt';
import mqttPacket from 'mqtt-packet';
import WebSocket from 'ws';
import { type TestBroker } from './support/test-broker.js';
import { connect, Inbox, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';
import { closed, opened } from './support/ws-helpers.js';

/** A v5 PUBLISH header byte with both QoS bits set (QoS 3), topic "t", no properties, payload "x". */
const QOS3_PUBLISH = [0x36, 0x07, 0x00, 0x01, 0x74, 0x00, 0x01, 0x00, 0x78];
/** A PUBLISH whose topic length (0x00ff) runs past the end of the packet. */
const TRUNCATED_PUBLISH = [0x30, 0x04, 0x00, 0xff, 0x74, 0x74];
/**
 * A retained QoS 1 v5 PUBLISH to "a/b" whose user property's key length (0x1326) runs past its property
 * block: the attacker's packet (issue 37), once acknowledged and retained.
 */
const PROPERTY_OVERRUN = Buffer.from('331d0003612f6200031326d501610001620300017808000172090001636869', 'hex');
/** A QoS 1 PUBLISH with packet id 0 (v5: topic "t", id 0, no properties, payload "x"). */
const PACKET_ID_ZERO = [0x32, 0x07, 0x00, 0x01, 0x74, 0x00, 0x00, 0x00, 0x78];

describe('mqtt module: bad input gets the protocol answer, others are untouched', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let url: string;
  let bystander: MqttClient;
  let bystanderInbox: Inbox;

  before(async () => {
    broker = await startMqttBroker({ maxPacketSize: 2048, connectTimeoutMs: 500 });
    url = `${broker.url}/mqtt`;
    bystander = await connect(broker, { clientId: 'bystander' });
    bystanderInbox = new Inbox(bystander);
    await bystander.subscribeAsync('bystander/#', { qos: 1 });
  });
  after(async () => {
    // The process and the other client lived through everything above.
    const pub = await connect(broker);
    await pub.publishAsync('bystander/check', 'still here', { qos: 1 });
    const got = await bystanderInbox.wait(1);
    assert.equal(got[0]?.payload, 'still here');
    assert.equal(bystander.connected, true);
    await Promise.all([pub.endAsync(), bystander.endAsync()]);
    await broker.close();
  });

  async function expectDisconnect(raw: RawMqtt, reasonCode: number, closeCode: number): Promise<void> {
    const disconnect = await raw.next('disconnect');
    assert.equal(disconnect.reasonCode, reasonCode);
    assert.equal((await raw.closed()).code, closeCode);
  }

  it('QoS 3: v5 DISCONNECT 0x81 (malformed), close 1002', async () => {
    const raw = await RawMqtt.connected(url);
    raw.sendBytes(QOS3_PUBLISH);
    await expectDisconnect(raw, 0x81, 1002);
  });

  it('a user property whose length runs past its properties: v5 DISCONNECT 0x81, not acknowledged, not retained', async () => {
    const raw = await RawMqtt.connected(url);
    raw.sendBytes(PROPERTY_OVERRUN);
    await expectDisconnect(raw, 0x81, 1002);
    const reader = await connect(broker);
    const inbox = new Inbox(reader);
    await reader.subscribeAsync('a/b', { qos: 1 });
    // A marker after the subscription: a retained copy of the bad packet would have come before it.
    await reader.publishAsync('a/b', 'marker', { qos: 1 });
    const got = await inbox.wait(1);
    assert.deepEqual(
      got.map((m) => m.payload),
      ['marker'],
    );
    await reader.endAsync();
  });

  it('a truncated packet: v5 DISCONNECT 0x81', async () => {
    const raw = await RawMqtt.connected(url);
    raw.sendBytes(TRUNCATED_PUBLISH);
    await expectDisconnect(raw, 0x81, 1002);
  });

  it('a SUBSCRIBE or UNSUBSCRIBE with no topic filter (82 02 00 01): malformed, v5 DISCONNECT 0x81, close 1002; v3.1.1 closes; nothing logged as ours', async () => {
    const raw = await RawMqtt.connected(url);
    raw.sendBytes([0x82, 0x02, 0x00, 0x01]);
    await expectDisconnect(raw, 0x81, 1002);
    const old = await RawMqtt.connected(url, { protocolVersion: 4 });
    old.sendBytes([0x82, 0x02, 0x00, 0x01]);
    assert.equal((await old.closed()).code, 1002);
    // UNSUBSCRIBE likewise (a2 02 00 02).
    const unsub = await RawMqtt.connected(url);
    unsub.sendBytes([0xa2, 0x02, 0x00, 0x02]);
    await expectDisconnect(unsub, 0x81, 1002);
    assert.ok(
      !broker.logLines().some((line) => Number(line['level']) >= 50),
      'a client’s malformed packet is not an error of ours',
    );
  });

  it('v3.1.1 malformed packet: the connection closes without a DISCONNECT', async () => {
    const raw = await RawMqtt.connected(url, { protocolVersion: 4 });
    raw.sendBytes(TRUNCATED_PUBLISH);
    assert.equal((await raw.closed()).code, 1002);
    assert.deepEqual(raw.received(), []);
  });

  it('a packet over the maximum packet size: v5 DISCONNECT 0x95, close 1009', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({
      cmd: 'publish',
      topic: 'big',
      payload: Buffer.alloc(4000),
      qos: 0,
      retain: false,
      dup: false,
    });
    await expectDisconnect(raw, 0x95, 1009);
  });

  it('an oversize packet spread over several frames is refused at its header', async () => {
    const raw = await RawMqtt.connected(url);
    // Fixed header announcing 100000 bytes, then only a little of the body.
    raw.sendBytes([0x30, 0xa0, 0x8d, 0x06]);
    raw.sendBytes([0x00, 0x01, 0x74]);
    await expectDisconnect(raw, 0x95, 1009);
  });

  it('a second CONNECT: v5 DISCONNECT 0x82 (protocol error)', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({ cmd: 'connect', protocolVersion: 5, clientId: 'again', clean: true, keepalive: 0 });
    await expectDisconnect(raw, 0x82, 1002);
  });

  it('DUP set on a QoS 0 PUBLISH (MQTT-3.3.1-2): v5 DISCONNECT 0x81, v3.1.1 closes; nothing is routed', async () => {
    // Routed, it would reach the bystander before the after hook's check message, and fail that check.
    const dupQos0 = {
      cmd: 'publish',
      topic: 'bystander/dup',
      payload: Buffer.from('x'),
      qos: 0,
      retain: false,
      dup: true,
    } as const;
    const v5 = await RawMqtt.connected(url);
    v5.send(dupQos0);
    await expectDisconnect(v5, 0x81, 1002);
    const v4 = await RawMqtt.connected(url, { protocolVersion: 4 });
    v4.send(dupQos0);
    assert.equal((await v4.closed()).code, 1002);
    assert.deepEqual(v4.received(), []);
  });

  it('ill-formed UTF-8 in a topic (MQTT 1.5.4): v5 DISCONNECT 0x81, v3.1.1 closes; nothing is routed', async () => {
    // "bystander/" then 0xff: routed, it would reach the bystander ahead of the after hook's check message.
    const topic = [...Buffer.from('bystander/'), 0xff];
    const body = (version: 4 | 5) => [0, topic.length, ...topic, ...(version === 5 ? [0] : []), 0x78];
    const v5 = await RawMqtt.connected(url);
    v5.sendBytes([0x30, body(5).length, ...body(5)]);
    await expectDisconnect(v5, 0x81, 1002);
    const v4 = await RawMqtt.connected(url, { protocolVersion: 4 });
    v4.sendBytes([0x30, body(4).length, ...body(4)]);
    assert.equal((await v4.closed()).code, 1002);
    assert.deepEqual(v4.received(), []);
  });

  it('a packet before CONNECT: closed with nothing sent', async () => {
    const raw = await RawMqtt.open(url, 5);
    raw.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'a', qos: 0 }] });
    assert.equal((await raw.closed()).code, 1002);
    assert.deepEqual(raw.received(), []);
  });

  it('an invalid topic name in PUBLISH: v5 DISCONNECT 0x90', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({
      cmd: 'publish',
      topic: 'a/+/b',
      payload: Buffer.from('x'),
      qos: 0,
      retain: false,
      dup: false,
    });
    await expectDisconnect(raw, 0x90, 1002);
  });

  it('an invalid filter: v5 SUBACK 0x8F for it and the connection stays; v3.1.1 closes', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({
      cmd: 'subscribe',
      messageId: 7,
      subscriptions: [
        { topic: 'a/#/b', qos: 1 },
        { topic: 'ok/+', qos: 1 },
      ],
    });
    const suback = await raw.next('suback');
    assert.deepEqual(suback.granted, [0x8f, 1]);
    raw.send({ cmd: 'pingreq' });
    await raw.next('pingresp');
    raw.send({ cmd: 'disconnect' });

    const v3 = await RawMqtt.connected(url, { protocolVersion: 4 });
    v3.send({ cmd: 'subscribe', messageId: 7, subscriptions: [{ topic: 'a/#/b', qos: 1 }] });
    assert.equal((await v3.closed()).code, 1002);
    assert.deepEqual(v3.received(), []);
  });

  it('packet id 0 on a QoS 1 PUBLISH: v5 DISCONNECT 0x82', async () => {
    const raw = await RawMqtt.connected(url);
    raw.sendBytes(PACKET_ID_ZERO);
    await expectDisconnect(raw, 0x82, 1002);
  });

  it('subscription identifier 0: v5 DISCONNECT 0x82', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({
      cmd: 'subscribe',
      messageId: 1,
      subscriptions: [{ topic: 'a', qos: 0 }],
      properties: { subscriptionIdentifier: 0 },
    });
    await expectDisconnect(raw, 0x82, 1002);
  });

  it('PUBREL for an unknown packet id: v5 PUBCOMP 0x92, the connection stays', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({ cmd: 'pubrel', messageId: 4242 });
    const pubcomp = await raw.next('pubcomp');
    assert.deepEqual([pubcomp.messageId, pubcomp.reasonCode], [4242, 0x92]);
    raw.send({ cmd: 'disconnect' });
  });

  it('an unknown topic alias: v5 DISCONNECT 0x82; an alias over the maximum: 0x94', async () => {
    const raw = await RawMqtt.connected(url);
    raw.send({
      cmd: 'publish',
      topic: '',
      payload: Buffer.from('x'),
      qos: 0,
      retain: false,
      dup: false,
      properties: { topicAlias: 3 },
    });
    await expectDisconnect(raw, 0x82, 1002);
    const over = await RawMqtt.connected(url);
    over.send({
      cmd: 'publish',
      topic: 'a',
      payload: Buffer.from('x'),
      qos: 0,
      retain: false,
      dup: false,
      properties: { topicAlias: 1000 },
    });
    await expectDisconnect(over, 0x94, 1002);
  });

  it('an unsupported protocol version gets CONNACK 0x01 and a close', async () => {
    const raw = await RawMqtt.open(url, 4);
    // CONNECT "MQTT" level 6.
    raw.sendBytes([0x10, 0x0d, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x06, 0x02, 0x00, 0x00, 0x00, 0x01, 0x61]);
    const connack = await raw.next('connack');
    assert.equal(connack.returnCode, 1);
    await raw.closed();
  });

  it('a text frame closes with 1003', async () => {
    const ws = new WebSocket(url, 'mqtt');
    await opened(ws);
    const closing = closed(ws);
    ws.send('CONNECT please');
    assert.equal((await closing).code, 1003);
  });

  it('no CONNECT after the WebSocket opens: closed after the connect timeout', async () => {
    const raw = await RawMqtt.open(url, 5);
    assert.equal((await raw.closed()).code, 1008);
  });

  it('fuzz: mutated and random packets never fail the module (no 1011) or the process', async () => {
    // A fixed-seed generator, so a failure replays the same bytes.
    let seed = 0x2545f491;
    // mulberry32: an LCG's low bits would repeat with a tiny period.
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const valid = [
      mqttPacket.generate(
        {
          cmd: 'subscribe',
          messageId: 3,
          subscriptions: [{ topic: 'f/+', qos: 2, nl: true, rh: 1 }],
          properties: { subscriptionIdentifier: 4 },
        },
        { protocolVersion: 5 },
      ),
      mqttPacket.generate(
        {
          cmd: 'publish',
          topic: 'f/x',
          payload: Buffer.from('p'),
          qos: 2,
          messageId: 5,
          retain: true,
          dup: false,
          properties: { topicAlias: 2, contentType: 'c' },
        },
        { protocolVersion: 5 },
      ),
      mqttPacket.generate(
        { cmd: 'unsubscribe', messageId: 6, unsubscriptions: ['f/+'] },
        { protocolVersion: 5 },
      ),
      mqttPacket.generate({ cmd: 'pubrel', messageId: 5 }, { protocolVersion: 5 }),
    ];
    for (let round = 0; round < 60; round++) {
      const raw = await RawMqtt.connected(url, { clientId: `fuzz-${round % 7}` });
      for (let i = 0; i < 6; i++) {
        const kind = random(4);
        if (kind === 0) {
          raw.sendBytes(Array.from({ length: 1 + random(24) }, () => random(256)));
          continue;
        }
        const bytes = Buffer.from(valid[random(valid.length)] as Buffer);
        // Half the packets go out intact, so the session gets deep enough for later mutations to matter.
        if (kind === 1) bytes[random(bytes.length)] = random(256);
        raw.sendBytes(bytes);
      }
      raw.ws.close();
      await raw.closed();
    }
    assert.doesNotMatch(broker.logText(), /module failed/);
  });

  it('silence past 1.5 times the keep-alive: v5 DISCONNECT 0x8D', async () => {
    const raw = await RawMqtt.connected(url, { keepalive: 1 });
    const disconnect = await raw.next('disconnect', 5000);
    assert.equal(disconnect.reasonCode, 0x8d);
  });
});

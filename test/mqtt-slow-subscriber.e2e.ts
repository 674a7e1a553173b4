import assert from 'node:assert/strict';
import { type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect, startMqttBroker } from './support/mqtt-helpers.js';
import { counter } from './support/ocpp.js';
import mqttPacket, { type Packet } from 'mqtt-packet';
import WebSocket from 'ws';
import { type TestBroker } from './support/test-broker.js';
import { opened, waitFor } from './support/ws-helpers.js';

describe('mqtt: a subscriber that cannot keep up', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startMqttBroker(
      { slowSubscriberDropBytes: 64 * 1024 },
      { outboundBufferCap: 1024 * 1024 },
    );
  });
  after(() => broker.close());

  const drops = () =>
    counter(
      `http://127.0.0.1:${broker.port}`,
      'broker_mqtt_messages_dropped_total',
      'reason="slow subscriber"',
    );

  it('loses QoS 0 messages (counted in a metric), keeps its connection, and gets what is published once it reads again', async () => {
    // A bare MQTT client over ws, so that its socket can stop being read.
    const slow = new WebSocket(`${broker.url}/mqtt`, 'mqtt');
    const received: Packet[] = [];
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', (packet: Packet) => received.push(packet));
    slow.on('message', (data: Buffer) => parser.parse(data));
    await opened(slow);
    const send = (packet: Packet) => slow.send(mqttPacket.generate(packet, { protocolVersion: 5 }));
    send({ cmd: 'connect', protocolVersion: 5, clientId: 'slow', clean: true, keepalive: 0 });
    send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'flood/#', qos: 0 }] });
    await waitFor(() => received.some((p) => p.cmd === 'suback'));
    const bystander = await connect(broker, { clientId: 'bystander' });
    await bystander.subscribeAsync('flood/#');
    let bystanderGot = 0;
    bystander.on('message', () => bystanderGot++);

    const socket = (slow as unknown as { _socket: Socket })._socket;
    socket.pause();
    const publisher = await connect(broker, { clientId: 'publisher' });
    const payload = Buffer.alloc(1024, 0x61);
    for (let i = 0; i < 40_000; i++) publisher.publish('flood/x', payload, { qos: 0 });
    // A QoS 1 PUBLISH after the flood: its PUBACK means the broker has routed everything before it.
    await publisher.publishAsync('other/done', 'done', { qos: 1 });
    assert.ok((await drops()) > 0, 'QoS 0 messages to the slow subscriber were dropped and counted');
    // The shedding alarm counts every module's drop counter: raised at its next check (every 5 s).
    const alarmed = async () =>
      /broker_alarm_active\{alarm="shedding"\} 1/.test(
        await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text(),
      );
    await waitFor(alarmed, 12_000);
    assert.equal(slow.readyState, WebSocket.OPEN, 'not closed: only its QoS 0 messages were shed');
    assert.equal(bystander.connected, true);
    assert.ok(bystanderGot > 0);
    socket.resume();
    // Once it has read what was sent, a new message reaches it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await publisher.publishAsync('flood/marker', 'after', { qos: 0 });
    await waitFor(() => received.some((p) => p.cmd === 'publish' && p.topic === 'flood/marker'), 20_000);
    const floods = received.filter((p) => p.cmd === 'publish' && p.topic === 'flood/x').length;
    assert.ok(floods < 40_000, `${floods} of the 40,000 reached it: the rest were shed`);
    assert.equal(slow.readyState, WebSocket.OPEN);
    await Promise.all([publisher.endAsync(), bystander.endAsync()]);
    slow.close();
  });
});

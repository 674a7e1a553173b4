import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectAsync } from 'mqtt';
import WebSocket from 'ws';
import { TOPIC_BUS, type TopicBus } from '#broker/bus';
import { MqttModule } from '#broker/protocols/mqtt';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { connect, Inbox, MQTT_ENDPOINT, nextEvent } from './support/mqtt-helpers.js';
import { nextMessage, opened } from './support/ws-helpers.js';

describe('mqtt module: bus bridge, $SYS, TCP listener, shutdown', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let tcpPort: number;

  before(async () => {
    broker = await startTestBroker(
      {
        mqtt: { sysIntervalSec: 1, tcpPort: 0, tcpHost: '127.0.0.1' },
        endpoints: [MQTT_ENDPOINT, { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' }],
      },
      [MqttModule],
    );
    const line = broker.logLines().find((l) => l['msg'] === 'mqtt tcp listener started');
    tcpPort = line?.['port'] as number;
  });
  after(() => broker.close());

  it('chat.v1 messages reach MQTT subscribers, MQTT publishes reach the chat room', async () => {
    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('chat/+', { qos: 0 });
    const chat = new WebSocket(`${broker.url}/chat`, 'chat.v1');
    const welcome = nextMessage(chat);
    await opened(chat);
    await welcome;
    chat.send(JSON.stringify({ type: 'join', room: 'lobby' }));
    await nextMessage(chat);

    const heard = nextMessage(chat);
    const pub = await connect(broker);
    await pub.publishAsync('chat/lobby', 'from mqtt', { qos: 1 });
    // Wrapped as a chat message, so that a chat client reads JSON whoever published.
    assert.deepEqual(JSON.parse(await heard), {
      type: 'message',
      room: 'lobby',
      user: null,
      text: 'from mqtt',
      origin: 'mqtt',
    });
    await inbox.wait(1);

    chat.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'from chat' }));
    const got = await inbox.wait(2);
    const fromChat = got[1];
    assert.equal(fromChat?.topic, 'chat/lobby');
    assert.equal(JSON.parse(fromChat?.payload ?? '{}').text, 'from chat');
    assert.equal(fromChat?.packet.properties?.contentType, 'application/json');
    chat.close();
    await Promise.all([sub.endAsync(), pub.endAsync()]);
  });

  it('a bus message no MQTT client subscribed to is not read: a lazy payload is never built', async () => {
    const bus = broker.app.get<TopicBus>(TOPIC_BUS);
    let reads = 0;
    const message = {
      topic: 'quiet/one',
      origin: 'test',
      get payload(): Uint8Array {
        reads++;
        return Buffer.from('built');
      },
    };
    bus.publish(message);
    assert.equal(reads, 0);

    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    await sub.subscribeAsync('quiet/+', { qos: 0 });
    bus.publish(message);
    const [got] = await inbox.wait(1);
    assert.equal(got?.payload, 'built');
    assert.ok(reads >= 1);
    await sub.endAsync();
  });

  it('$SYS/broker statistics are retained and not matched by #', async () => {
    const client = await connect(broker);
    const inbox = new Inbox(client);
    await client.subscribeAsync('#', { qos: 0 });
    await client.subscribeAsync('$SYS/broker/uptime', { qos: 0 });
    const [uptime] = await inbox.wait(1);
    assert.equal(uptime?.topic, '$SYS/broker/uptime');
    assert.match(uptime?.payload ?? '', /^\d+$/);
    assert.equal(inbox.received.length, 1);
    await client.endAsync();
  });

  it('MQTT over TCP shares the broker and the sessions with WebSocket clients', async () => {
    assert.ok(tcpPort > 0);
    const tcp = await connectAsync(`mqtt://127.0.0.1:${tcpPort}`, {
      reconnectPeriod: 0,
      protocolVersion: 5,
      clientId: 'roamer',
    });
    const inbox = new Inbox(tcp);
    await tcp.subscribeAsync('roam/#', { qos: 1 });
    const ws = await connect(broker);
    await ws.publishAsync('roam/a', 'over ws', { qos: 1 });
    assert.equal((await inbox.wait(1))[0]?.payload, 'over ws');
    const taken = nextEvent<[{ reasonCode?: number }]>(tcp, 'disconnect');
    const sameId = await connect(broker, { clientId: 'roamer' });
    assert.equal((await taken)[0].reasonCode, 0x8e);
    await Promise.all([sameId.endAsync(), ws.endAsync()]);
    tcp.end(true);
  });

  it('shutdown sends v5 DISCONNECT 0x8B before the close', async () => {
    const own = await startTestBroker({ mqtt: { sysIntervalSec: 0 }, endpoints: [MQTT_ENDPOINT] }, [
      MqttModule,
    ]);
    const client = await connect(own);
    const disconnect = nextEvent<[{ reasonCode?: number }]>(client, 'disconnect');
    await own.close();
    assert.equal((await disconnect)[0].reasonCode, 0x8b);
    client.end(true);
  });
});

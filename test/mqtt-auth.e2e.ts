import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import mqttPacket from 'mqtt-packet';
import request from 'supertest';
import { MqttModule } from '#broker/protocols/mqtt';
import { startTestBroker, type TestBroker, JWT_SECRET } from './support/test-broker.js';
import { connect, Inbox, MQTT_ENDPOINT, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';
import { signToken } from './support/tokens.js';

function scopedToken(sub: string, scope: string): Promise<string> {
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

describe('mqtt module: username/password credentials from the store', { timeout: 60_000 }, () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker(
      {
        mqtt: { sysIntervalSec: 0 },
        endpoints: [{ ...MQTT_ENDPOINT, auth: { mode: 'required', carriers: ['query', 'first-message'] } }],
      },
      [MqttModule],
    );
    await request(broker.url.replace(/^ws/, 'http'))
      .post('/admin/v1/credentials/passwords')
      .send({
        name: 'device',
        username: 'device-7',
        password: 's3cret-pass',
        scopes: ['mqtt:publish:devices/7/#'],
      })
      .expect(201);
  });
  after(() => broker.close());

  it('a stored credential connects with its scopes; a wrong password gets 0x86 and is not logged', async () => {
    const device = await connect(broker, { username: 'device-7', password: 's3cret-pass' });
    await device.publishAsync('devices/7/temp', '20', { qos: 1 });
    await assert.rejects(device.publishAsync('devices/8/temp', '20', { qos: 1 }), { code: 0x87 });
    await device.endAsync();
    await assert.rejects(
      connect(broker, { username: 'device-7', password: 'wrong-pass' }),
      /Bad User Name or Password/i,
    );
    assert.doesNotMatch(broker.logText(), /s3cret-pass|wrong-pass/);
  });

  it('a stored credential whose endpoint: scopes leave out /mqtt is closed 1008, never connected', async () => {
    await request(broker.url.replace(/^ws/, 'http'))
      .post('/admin/v1/credentials/passwords')
      .send({ name: 'chat-only', username: 'chatter', password: 'chat-pass-1', scopes: ['endpoint:/chat'] })
      .expect(201);
    const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
    raw.send({
      cmd: 'connect',
      protocolVersion: 5,
      clientId: 'chatter',
      clean: true,
      keepalive: 0,
      username: 'chatter',
      password: Buffer.from('chat-pass-1'),
    });
    const closed = await raw.closed();
    assert.equal(closed.code, 1008);
    assert.match(closed.reason, /does not open \/mqtt/);
    assert.deepEqual(
      raw.received().filter((p) => p.cmd === 'connack' && p.reasonCode === 0),
      [],
      'no successful CONNACK',
    );
  });

  it('a client gone before its password check ends leaves nothing behind (no expiry timer on a closed connection)', async () => {
    await request(broker.url.replace(/^ws/, 'http'))
      .post('/admin/v1/credentials/passwords')
      .send({
        name: 'brief',
        username: 'brief-1',
        password: 'brief-pass-1',
        expiresAt: new Date(Date.now() + 2500).toISOString(),
      })
      .expect(201);
    const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
    raw.send({
      cmd: 'connect',
      protocolVersion: 5,
      clientId: 'brief',
      clean: true,
      keepalive: 0,
      username: 'brief-1',
      password: Buffer.from('brief-pass-1'),
    });
    raw.ws.terminate();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.doesNotMatch(broker.logText(), /"subject":"brief-1"[^\n]*credential expired/);
  });

  it('packets pipelined behind CONNECT wait for its password check, within the endpoint limits (1008 past them)', async () => {
    const bytes = (packets: mqttPacket.Packet[]): Buffer =>
      Buffer.concat(packets.map((p) => mqttPacket.generate(p, { protocolVersion: 5 })));
    const connect: mqttPacket.Packet = {
      cmd: 'connect',
      protocolVersion: 5,
      clientId: 'device-7',
      clean: true,
      keepalive: 0,
      username: 'device-7',
      password: Buffer.from('s3cret-pass'),
    };
    const ping: mqttPacket.Packet = { cmd: 'pingreq' };
    const polite = await RawMqtt.open(`${broker.url}/mqtt`, 5);
    polite.sendBytes(bytes([connect, ping, ping, ping]));
    assert.equal((await polite.next('connack')).reasonCode, 0);
    for (let n = 0; n < 3; n++) await polite.next('pingresp');
    polite.send({ cmd: 'disconnect' });

    // More packets than firstMessageMaxQueued (16), or more bytes than firstMessageMaxBytes (8192).
    const publish: mqttPacket.Packet = {
      cmd: 'publish',
      topic: 'devices/7/big',
      payload: Buffer.alloc(9000),
      qos: 0,
      retain: false,
      dup: false,
    };
    for (const [flood, why] of [
      [[connect, ...Array<mqttPacket.Packet>(20).fill(ping)], /too many messages before authentication/],
      [[connect, publish], /too much data before authentication/],
    ] as const) {
      const raw = await RawMqtt.open(`${broker.url}/mqtt`, 5);
      raw.sendBytes(bytes([...flood]));
      const closed = await raw.closed();
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, why);
      assert.deepEqual(raw.received(), [], 'neither a CONNACK nor an answer to a held packet');
    }
  });
});

describe('mqtt module: authentication and scopes', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let url: string;

  before(async () => {
    broker = await startMqttBroker({}, { auth: { mode: 'required', carriers: ['query', 'first-message'] } });
    url = `${broker.url}/mqtt`;
  });
  after(() => broker.close());

  async function connackOf(version: 4 | 5, extra: Record<string, unknown>): Promise<number | undefined> {
    const raw = await RawMqtt.open(url, version);
    raw.send({
      cmd: 'connect',
      protocolVersion: version,
      clientId: 'c',
      clean: true,
      keepalive: 0,
      ...extra,
    });
    const connack = await raw.next('connack');
    await raw.closed();
    return version === 5 ? connack.reasonCode : connack.returnCode;
  }

  it('a JWT as the CONNECT password is accepted, and never logged', async () => {
    const token = await signToken({ sub: 'dev-1' });
    const client = await connect(broker, { username: 'dev-1', password: token });
    assert.equal(client.connected, true);
    await client.endAsync();
    assert.doesNotMatch(broker.logText(), new RegExp(token.slice(-20)));
  });

  it('the handshake token (query) is enough when CONNECT has no password', async () => {
    const token = await signToken({ sub: 'dev-2' });
    const raw = await RawMqtt.open(`${url}?token=${token}`, 5);
    raw.send({ cmd: 'connect', protocolVersion: 5, clientId: 'q', clean: true, keepalive: 0 });
    assert.equal((await raw.next('connack')).reasonCode, 0);
    raw.send({ cmd: 'disconnect' });
  });

  it('refusals: no credential 0x87/5, bad JWT 0x86/4, unknown username/password 0x86/4', async () => {
    assert.equal(await connackOf(5, {}), 0x87);
    assert.equal(await connackOf(4, {}), 5);
    const forged = await signToken({ secret: 'another-secret-that-is-at-least-32-characters' });
    assert.equal(await connackOf(5, { username: 'x', password: Buffer.from(forged) }), 0x86);
    assert.equal(await connackOf(4, { username: 'x', password: Buffer.from(forged) }), 4);
    assert.equal(await connackOf(5, { username: 'x', password: Buffer.from('hunter2') }), 0x86);
    assert.equal(await connackOf(4, { username: 'x', password: Buffer.from('hunter2') }), 4);
    // A good token whose endpoint: scopes do not include /mqtt, as at the handshake (403 there).
    const elsewhere = await scopedToken('eve', 'endpoint:/chat');
    assert.equal(await connackOf(5, { username: 'x', password: Buffer.from(elsewhere) }), 0x87);
    assert.equal(await connackOf(4, { username: 'x', password: Buffer.from(elsewhere) }), 5);
    assert.doesNotMatch(broker.logText(), /hunter2/);
  });

  it('scopes: denied SUBSCRIBE gets 0x87 (v5) or 0x80 (v3.1.1); denied PUBLISH gets 0x87 (v5) or is dropped (v3)', async () => {
    const scope = 'mqtt:publish:allowed/# mqtt:subscribe:allowed/#';
    const watcher = await connect(broker, {
      username: 'watcher',
      password: await signToken({ sub: 'watcher' }),
    });
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync('#', { qos: 1 });

    const v5 = await RawMqtt.connected(url, {
      username: 'v5',
      password: Buffer.from(await scopedToken('v5', scope)),
    });
    v5.send({
      cmd: 'subscribe',
      messageId: 1,
      subscriptions: [
        { topic: 'allowed/+', qos: 1 },
        { topic: 'denied/x', qos: 1 },
        { topic: '#', qos: 1 },
      ],
    });
    assert.deepEqual((await v5.next('suback')).granted, [1, 0x87, 0x87]);
    v5.send({
      cmd: 'publish',
      topic: 'denied/x',
      payload: Buffer.from('no'),
      qos: 1,
      messageId: 2,
      retain: false,
      dup: false,
    });
    assert.equal((await v5.next('puback')).reasonCode, 0x87);

    const v3 = await RawMqtt.connected(url, {
      protocolVersion: 4,
      username: 'v3',
      password: Buffer.from(await scopedToken('v3', scope)),
    });
    v3.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'denied/#', qos: 1 }] });
    assert.deepEqual((await v3.next('suback')).granted, [0x80]);
    v3.send({
      cmd: 'publish',
      topic: 'denied/y',
      payload: Buffer.from('no'),
      qos: 1,
      messageId: 2,
      retain: false,
      dup: false,
    });
    await v3.next('puback');
    v3.send({
      cmd: 'publish',
      topic: 'allowed/y',
      payload: Buffer.from('yes'),
      qos: 1,
      messageId: 3,
      retain: false,
      dup: false,
    });
    await v3.next('puback');

    const got = await inbox.wait(1);
    assert.deepEqual(
      got.map((m) => [m.topic, m.payload]),
      [['allowed/y', 'yes']],
    );
    v5.send({ cmd: 'disconnect' });
    v3.send({ cmd: 'disconnect' });
    await watcher.endAsync();
  });
});

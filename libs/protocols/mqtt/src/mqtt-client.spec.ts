import { TopicAuthorizer } from '#broker/auth';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttConfig } from './mqtt-config.js';
import { authenticateFirstMessage } from '#broker/gateway';
import { ManualClock } from '#broker/kit';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { MqttBroker } from './mqtt-broker.js';
import { type Delivery } from './delivery.js';
import { dispatch } from './handlers/dispatch.js';
import { MqttClient, type MqttLogger } from './mqtt-client.js';
import { FILTERS_PER_TURN } from './handlers/subscribe.js';

const config: MqttConfig = {
  tcpPort: null,
  tcpHost: '127.0.0.1',
  tcpAuthRequired: false,
  tcpInputBudget: false,
  connectTimeoutMs: 10_000,
  maxPacketSize: 64 * 1024,
  maxInflight: 8,
  receiveMaximum: 4,
  maxQueuedMessages: 10,
  maxQueuedBytes: 1024,
  slowSubscriberDropBytes: 1000,
  maxSubscriptionsPerClient: 4,
  maxSessions: 3,
  maxRetainedMessages: 100,
  maxRetainedBytes: 1024 * 1024,
  topicAliasMaximum: 8,
  maxKeepAliveSec: 60,
  maxSessionExpirySec: 3600,
  sysIntervalSec: 0,
  cluster: { ackWaitMs: 30_000, streamMaxBytes: 0 },
};

const OPEN = new TopicAuthorizer({ rules: [], noMatch: 'allow' });

const quiet: MqttLogger = { info() {}, warn() {}, debug() {}, error() {} };

/** A delivery on topic `q` (QoS 1 or 2); with `streamSequence`, the stream's, its packet id the next. */
function delivery(
  payload: string,
  qos: 1 | 2,
  stream?: { streamSequence: number; settled?: boolean[]; redelivered?: boolean; streamStoredMs?: number },
): Delivery {
  const message = {
    topic: 'q',
    payload: Buffer.from(payload),
    qos,
    retain: false,
    publisherId: null,
    expiresAt: null,
    properties: {},
  };
  if (stream === undefined) return { message, qos, retain: false, subscriptionIds: [] };
  const { streamSequence, settled, redelivered, streamStoredMs } = stream;
  return {
    message,
    qos,
    retain: false,
    subscriptionIds: [],
    streamSequence,
    packetId: streamSequence + 1,
    ...(redelivered === undefined ? {} : { redelivered }),
    ...(streamStoredMs === undefined ? {} : { streamStoredMs }),
    ...(settled === undefined ? {} : { settle: (done: boolean) => void settled.push(done) }),
  };
}

/** One client driven by bytes, with everything the broker writes to it decoded back into packets. */
class Peer {
  readonly packets: Packet[] = [];
  ended: number | null = null;
  /** What the transport reports as written and not yet sent (a test sets it to play a slow reader). */
  buffered = 0;
  /** The loop time charged to it after `receive` returned (a SUBSCRIBE's slices). */
  readonly charged: number[] = [];
  readonly client: MqttClient;
  private readonly parser = mqttPacket.parser({ protocolVersion: 5 });

  constructor(
    broker: MqttBroker,
    private readonly version: 4 | 5 = 5,
  ) {
    this.parser = mqttPacket.parser({ protocolVersion: version });
    this.parser.on('packet', (p: Packet) => this.packets.push(p));
    this.client = new MqttClient(
      broker,
      {
        send: (bytes) => this.parser.parse(bytes),
        buffered: () => this.buffered,
        charge: (ms) => this.charged.push(ms),
        close: (code) => (this.ended = code),
      },
      {
        transport: 'ws',
        connectionId: null,
        remoteAddress: '127.0.0.1',
        holdLimits: { maxQueued: 16, maxBytes: 8192 },
        authenticate: (credential) =>
          authenticateFirstMessage(
            credential,
            null,
            { mode: 'optional', path: null, timeoutMs: 1000 },
            { verifyToken: () => Promise.reject(new Error('no tokens here')), passwords: null },
          ),
      },
      quiet,
      dispatch,
    );
  }

  send(packet: Packet): void {
    this.client.receive(mqttPacket.generate(packet, { protocolVersion: this.version }));
  }

  /** CONNECT and let the (async) authentication settle. */
  async connect(clientId: string, extra: Partial<mqttPacket.IConnectPacket> = {}): Promise<Packet> {
    this.send({
      cmd: 'connect',
      protocolVersion: this.version,
      clientId,
      clean: true,
      keepalive: 0,
      ...extra,
    });
    await new Promise((resolve) => setImmediate(resolve));
    return this.take('connack');
  }

  take<C extends Packet['cmd']>(cmd: C): Extract<Packet, { cmd: C }> {
    const index = this.packets.findIndex((p) => p.cmd === cmd);
    assert.ok(index >= 0, `expected a ${cmd}, got ${this.packets.map((p) => p.cmd).join(',') || 'nothing'}`);
    return this.packets.splice(index, 1)[0] as Extract<Packet, { cmd: C }>;
  }

  publishes(): mqttPacket.IPublishPacket[] {
    const found = this.packets.filter((p): p is mqttPacket.IPublishPacket => p.cmd === 'publish');
    this.packets.splice(0, this.packets.length, ...this.packets.filter((p) => p.cmd !== 'publish'));
    return found;
  }
}

function publish(topic: string, payload: string, qos: 0 | 1 | 2, messageId?: number, extra = {}): Packet {
  return {
    cmd: 'publish',
    topic,
    payload: Buffer.from(payload),
    qos,
    retain: false,
    dup: false,
    messageId,
    ...extra,
  };
}

describe('MqttClient (sans-IO, real broker core, no sockets)', () => {
  it('respects the client receive maximum: no more QoS 1 in flight until acknowledged', async () => {
    const broker = new MqttBroker(config, OPEN);
    const sub = new Peer(broker);
    await sub.connect('sub', { properties: { receiveMaximum: 2 } });
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q', qos: 1 }] });
    const pub = new Peer(broker);
    await pub.connect('pub');
    for (let i = 1; i <= 4; i++) pub.send(publish('q', `m${i}`, 1, i));
    const first = sub.publishes();
    assert.deepEqual(
      first.map((p) => String(p.payload)),
      ['m1', 'm2'],
    );
    sub.send({ cmd: 'puback', messageId: first[0]?.messageId as number });
    assert.deepEqual(
      sub.publishes().map((p) => String(p.payload)),
      ['m3'],
    );
  });

  it('a subscriber that cannot keep up loses QoS 0 messages (counted), not its connection; QoS 1 still goes', async () => {
    const broker = new MqttBroker(config, OPEN);
    const dropped: string[] = [];
    broker.hooks.dropped = (why, clientId) => dropped.push(`${why}:${clientId}`);
    const sub = new Peer(broker);
    await sub.connect('slow');
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 't', qos: 1 }] });
    const pub = new Peer(broker);
    await pub.connect('pub');
    sub.buffered = 1001;
    pub.send(publish('t', 'zero', 0));
    pub.send(publish('t', 'one', 1, 1));
    assert.deepEqual(
      sub.publishes().map((p) => String(p.payload)),
      ['one'],
    );
    assert.deepEqual(dropped, ['slow subscriber:slow']);
    assert.equal(broker.stats.publishDropped, 1);
    assert.equal(sub.ended, null, 'still connected');
    sub.buffered = 0;
    pub.send(publish('t', 'zero again', 0));
    assert.deepEqual(
      sub.publishes().map((p) => String(p.payload)),
      ['zero again'],
    );
  });

  it('on resume, an unfinished QoS 2 delivery continues where it stopped: PUBREL again, not PUBLISH', async () => {
    const broker = new MqttBroker(config, OPEN);
    const persistent = { clean: false, properties: { sessionExpiryInterval: 60 } };
    const sub = new Peer(broker);
    await sub.connect('sub', persistent);
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q2', qos: 2 }] });
    const pub = new Peer(broker);
    await pub.connect('pub');
    pub.send(publish('q2', 'x', 2, 1));
    const [delivered] = sub.publishes();
    const id = delivered?.messageId as number;
    sub.send({ cmd: 'pubrec', messageId: id });
    assert.equal(sub.take('pubrel').messageId, id);
    sub.client.transportClosed();
    const back = new Peer(broker);
    await back.connect('sub', persistent);
    assert.equal(back.publishes().length, 0);
    assert.equal(back.take('pubrel').messageId, id);
    back.send({ cmd: 'pubcomp', messageId: id });
    assert.equal(broker.sessions.get('sub')?.inflight.size, 0);
  });

  it('a client over the broker receive maximum (unreleased QoS 2) gets DISCONNECT 0x93', async () => {
    const broker = new MqttBroker(config, OPEN);
    const pub = new Peer(broker);
    await pub.connect('pub');
    for (let i = 1; i <= 5; i++) pub.send(publish('q2', 'x', 2, i));
    assert.equal(pub.take('disconnect').reasonCode, 0x93);
    assert.equal(pub.ended, 1002);
  });

  it('a resent QoS 2 PUBLISH before PUBREL is routed once', async () => {
    const broker = new MqttBroker(config, OPEN);
    const sub = new Peer(broker);
    await sub.connect('sub');
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'once', qos: 0 }] });
    const pub = new Peer(broker);
    await pub.connect('pub');
    pub.send(publish('once', 'x', 2, 9));
    pub.send({ ...publish('once', 'x', 2, 9), dup: true } as Packet);
    assert.equal(sub.publishes().length, 1);
    pub.send({ cmd: 'pubrel', messageId: 9 });
    assert.equal(pub.take('pubcomp').reasonCode, 0);
  });

  it('queued messages past their expiry are not delivered; the rest carry the remaining interval', async () => {
    const clock = new ManualClock(1_000_000);
    const broker = new MqttBroker(config, OPEN, clock);
    const sub = new Peer(broker);
    await sub.connect('sub', { clean: false, properties: { sessionExpiryInterval: 600 } });
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'exp', qos: 1 }] });
    sub.send({ cmd: 'disconnect' });
    const pub = new Peer(broker);
    await pub.connect('pub');
    pub.send(publish('exp', 'short', 1, 1, { properties: { messageExpiryInterval: 10 } }));
    pub.send(publish('exp', 'long', 1, 2, { properties: { messageExpiryInterval: 100 } }));
    clock.advance(30_000);
    const back = new Peer(broker);
    await back.connect('sub', { clean: false, properties: { sessionExpiryInterval: 600 } });
    const got = back.publishes();
    assert.deepEqual(
      got.map((p) => [String(p.payload), p.properties?.messageExpiryInterval]),
      [['long', 70]],
    );
  });

  it('a delayed will goes out after its delay; a session ends after its expiry', async () => {
    const clock = new ManualClock(1_000_000);
    const broker = new MqttBroker(config, OPEN, clock);
    const watcher = new Peer(broker);
    await watcher.connect('watcher');
    watcher.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'w', qos: 0 }] });
    const dying = new Peer(broker);
    await dying.connect('dying', {
      properties: { sessionExpiryInterval: 20 },
      will: {
        topic: 'w',
        payload: Buffer.from('bye'),
        qos: 0,
        retain: false,
        properties: { willDelayInterval: 5 },
      },
    });
    dying.client.transportClosed();
    assert.equal(watcher.publishes().length, 0);
    clock.advance(5_000);
    assert.deepEqual(
      watcher.publishes().map((p) => String(p.payload)),
      ['bye'],
    );
    assert.equal(broker.sessions.has('dying'), true);
    clock.advance(15_000);
    assert.equal(broker.sessions.has('dying'), false);
  });

  it('no-local holds on the many-subscriber path: the publisher is skipped, every other subscriber gets it', async () => {
    const broker = new MqttBroker(config, OPEN);
    const peers = [new Peer(broker), new Peer(broker), new Peer(broker)];
    const [self, a, b] = peers as [Peer, Peer, Peer];
    await self.connect('self');
    await a.connect('a');
    await b.connect('b');
    self.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'nl/+', qos: 0, nl: true }] });
    self.send({ cmd: 'subscribe', messageId: 2, subscriptions: [{ topic: 'nl/#', qos: 1, nl: true }] });
    a.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'nl/+', qos: 0 }] });
    b.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'nl/#', qos: 0 }] });
    self.send(publish('nl/x', 'mine', 0));
    assert.deepEqual(self.publishes(), []);
    assert.deepEqual(
      [a, b].map((peer) => peer.publishes().map((p) => String(p.payload))),
      [['mine'], ['mine']],
    );
  });

  for (const clean of [true, false]) {
    it(`a delayed will on a takeover ${clean ? 'with clean start goes out at once (the session ends)' : 'that resumes the session is not sent'}`, async () => {
      const clock = new ManualClock(1_000_000);
      const broker = new MqttBroker(config, OPEN, clock);
      const watcher = new Peer(broker);
      await watcher.connect('watcher');
      watcher.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'w', qos: 0 }] });
      const first = new Peer(broker);
      await first.connect('device', {
        clean: false,
        properties: { sessionExpiryInterval: 60 },
        will: {
          topic: 'w',
          payload: Buffer.from('bye'),
          qos: 0,
          retain: false,
          properties: { willDelayInterval: 30 },
        },
      });
      const second = new Peer(broker);
      const connack = (await second.connect('device', {
        clean,
        properties: { sessionExpiryInterval: 60 },
      })) as mqttPacket.IConnackPacket;
      assert.equal(first.take('disconnect').reasonCode, 0x8e);
      assert.equal(connack.sessionPresent, !clean);
      assert.deepEqual(
        watcher.publishes().map((p) => String(p.payload)),
        clean ? ['bye'] : [],
      );
      clock.advance(60_000);
      assert.deepEqual(watcher.publishes(), [], 'never a second time, and not after the delay either');
    });
  }

  it('DISCONNECT 0x04 or an error code publishes the will, a normal DISCONNECT does not', async () => {
    const broker = new MqttBroker(config, OPEN);
    const watcher = new Peer(broker);
    await watcher.connect('watcher');
    watcher.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'w/+', qos: 0 }] });
    const will = (topic: string) => ({
      will: { topic, payload: Buffer.from(topic), qos: 0 as const, retain: false },
    });
    const polite = new Peer(broker);
    await polite.connect('polite', will('w/polite'));
    polite.send({ cmd: 'disconnect', reasonCode: 0 });
    const asked = new Peer(broker);
    await asked.connect('asked', will('w/asked'));
    asked.send({ cmd: 'disconnect', reasonCode: 0x04 });
    const failing = new Peer(broker);
    await failing.connect('failing', will('w/failing'));
    failing.send({ cmd: 'disconnect', reasonCode: 0x80 });
    assert.deepEqual(
      watcher.publishes().map((p) => p.topic),
      ['w/asked', 'w/failing'],
    );
  });

  it('keep-alive over the maximum is lowered with server keep alive; problem info can be turned off', async () => {
    const broker = new MqttBroker(config, OPEN);
    const peer = new Peer(broker);
    const connack = (await peer.connect('ka', {
      keepalive: 600,
      properties: { requestProblemInformation: false },
    })) as mqttPacket.IConnackPacket;
    assert.equal(connack.properties?.serverKeepAlive, 60);
    for (let i = 1; i <= 5; i++) {
      peer.send({ cmd: 'subscribe', messageId: i, subscriptions: [{ topic: `s/${i}`, qos: 0 }] });
    }
    const subacks = peer.packets.filter((p): p is mqttPacket.ISubackPacket => p.cmd === 'suback');
    assert.deepEqual(subacks.at(-1)?.granted, [0x97], 'past maxSubscriptionsPerClient: quota exceeded');
    assert.equal(subacks.at(-1)?.properties?.reasonString, undefined);
  });

  it('refusals carry a reason string when problem information is wanted (the default)', async () => {
    const broker = new MqttBroker(config, OPEN);
    const peer = new Peer(broker);
    await peer.connect('why');
    peer.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'a/#/b', qos: 0 }] });
    assert.match(peer.take('suback').properties?.reasonString ?? '', /a\/#\/b: invalid topic filter/);
  });

  it('past maxSessions a new client id is refused (0x97), a known one still connects', async () => {
    const broker = new MqttBroker(config, OPEN);
    for (const id of ['s1', 's2', 's3']) {
      await new Peer(broker).connect(id, { clean: false, properties: { sessionExpiryInterval: 60 } });
    }
    const refused = (await new Peer(broker).connect('s4')) as mqttPacket.IConnackPacket;
    assert.equal(refused.reasonCode, 0x97);
    const known = (await new Peer(broker).connect('s2', { clean: false })) as mqttPacket.IConnackPacket;
    assert.deepEqual([known.reasonCode, known.sessionPresent], [0, true]);
  });

  it('v3.1.1: an empty client id needs clean session', async () => {
    const broker = new MqttBroker(config, OPEN);
    const peer = new Peer(broker, 4);
    // CONNECT 3.1.1, clean session 0, empty client id (mqtt-packet will not encode it).
    peer.client.receive(Buffer.from([0x10, 0x0c, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0, 0, 0, 0, 0]));
    assert.equal(peer.take('connack').returnCode, 2);
    assert.equal(peer.ended, 1000);
  });

  it('a stream message handed again while its copy is in flight goes out once, under the id the client knows', async () => {
    const broker = new MqttBroker(config, OPEN);
    const sub = new Peer(broker);
    await sub.connect('twice');
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q', qos: 2 }] });
    const session = broker.sessions.get('twice');
    assert.ok(session);
    const settled: boolean[] = [];
    for (const redelivered of [false, true]) {
      broker.deliver(session, delivery('m', 2, { streamSequence: 179, settled, redelivered }));
    }
    assert.deepEqual(
      sub.publishes().map((p) => p.messageId),
      [180],
    );
    sub.send({ cmd: 'pubrec', messageId: 180 });
    assert.equal(sub.take('pubrel').messageId, 180);
    assert.deepEqual(settled, [true]);
  });

  it('a stream message queued behind its first copy, which the client received meanwhile, is not sent again', async () => {
    const broker = new MqttBroker(config, OPEN);
    const sub = new Peer(broker);
    await sub.connect('queued-twice', { properties: { receiveMaximum: 1 } });
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q', qos: 2 }] });
    const session = broker.sessions.get('queued-twice');
    assert.ok(session);
    const settled: boolean[] = [];
    for (const redelivered of [false, true]) {
      broker.deliver(
        session,
        delivery('m', 2, { streamSequence: 179, settled, redelivered, streamStoredMs: 5_000 }),
      );
    }
    assert.deepEqual(
      sub.publishes().map((p) => p.messageId),
      [180],
    );
    sub.send({ cmd: 'pubrec', messageId: 180 });
    assert.equal(sub.take('pubrel').messageId, 180);
    sub.send({ cmd: 'pubcomp', messageId: 180 });
    assert.deepEqual(sub.publishes(), []);
    assert.deepEqual(settled, [true, true]);
  });

  it('a QoS 2 PUBREL waits for its record even when the client reconnects meanwhile: then once, to the new connection', async () => {
    const broker = new MqttBroker(config, OPEN);
    let written = (): void => undefined;
    let writing: Promise<'written'> | null = null;
    broker.directory = {
      claim: () => Promise.resolve({ state: null }),
      abandon: () => undefined,
      changed: () => undefined,
      persisted: () => writing ?? Promise.resolve('written'),
      ended: () => undefined,
      verified: () => null,
    };
    const persistent = { clean: false, properties: { sessionExpiryInterval: 60 } };
    const sub = new Peer(broker);
    await sub.connect('recorded', persistent);
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q', qos: 2 }] });
    await new Promise((resolve) => setImmediate(resolve));
    sub.take('suback');
    const session = broker.sessions.get('recorded');
    assert.ok(session);
    const settled: boolean[] = [];
    broker.deliver(session, delivery('m', 2, { streamSequence: 179, settled }));
    assert.deepEqual(
      sub.publishes().map((p) => p.messageId),
      [180],
    );
    // The record write holding the PUBREL stage hangs (a NATS restart): the client goes and comes back.
    writing = new Promise((resolve) => (written = () => resolve('written')));
    sub.send({ cmd: 'pubrec', messageId: 180 });
    sub.send({ cmd: 'pubrec', messageId: 180 });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      sub.packets.map((p) => p.cmd),
      [],
    );
    sub.client.transportClosed();
    const back = new Peer(broker);
    await back.connect('recorded', persistent);
    // Its PUBREL would let the client complete a message that no written record shows it received.
    assert.deepEqual(
      back.packets.map((p) => p.cmd),
      [],
    );
    assert.deepEqual(session.releasing(), [180], 'the record to be written holds the stage');
    assert.deepEqual(settled, []);
    written();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(settled, [true]);
    assert.deepEqual(
      back.packets.map((p) => [p.cmd, p.messageId]),
      [['pubrel', 180]],
    );
    assert.deepEqual(sub.packets, []);
    back.send({ cmd: 'pubcomp', messageId: 180 });
    assert.equal(session.inflight.size, 0);
  });

  it('while the directory verifies what this node holds, a PUBACK does not send what the stream queued', async () => {
    const broker = new MqttBroker(config, OPEN);
    const sub = new Peer(broker);
    await sub.connect('held', { properties: { receiveMaximum: 1 } });
    sub.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'q', qos: 1 }] });
    const session = broker.sessions.get('held');
    assert.ok(session);
    let verify = (): void => undefined;
    let verifying: Promise<void> | null = null;
    broker.directory = {
      claim: () => Promise.resolve({ state: null }),
      abandon: () => undefined,
      changed: () => undefined,
      persisted: () => Promise.resolve('written'),
      ended: () => undefined,
      verified: () => verifying,
    };
    broker.deliver(session, delivery('bus 1', 1));
    broker.deliver(session, delivery('bus 2', 1));
    broker.deliver(session, delivery('stream 3', 1, { streamSequence: 3 }));
    const payloads = (sent: mqttPacket.IPublishPacket[]): string[] => sent.map((p) => String(p.payload));
    const first = sub.publishes();
    assert.deepEqual(payloads(first), ['bus 1']);
    // A stall or a NATS outage: until the directory has read its records back, the stream's message may
    // be another node's to send. What came over the bus is this node's own.
    verifying = new Promise<void>((resolve) => (verify = resolve));
    sub.send({ cmd: 'puback', messageId: first[0]?.messageId as number });
    const second = sub.publishes();
    assert.deepEqual(payloads(second), ['bus 2']);
    sub.send({ cmd: 'puback', messageId: second[0]?.messageId as number });
    assert.deepEqual(sub.publishes(), []);
    verifying = null;
    verify();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(payloads(sub.publishes()), ['stream 3']);
  });

  it('a wildcard subscription that a topic rule cuts through gets only what its client may read', async () => {
    const authorizer = new TopicAuthorizer({
      rules: [
        { who: 'all', action: 'all', topics: ['devices/%c/#'], permission: 'allow' },
        { who: 'all', action: 'subscribe', topics: ['devices/#'], permission: 'deny' },
      ],
      noMatch: 'allow',
    });
    const broker = new MqttBroker(config, authorizer);
    const attacker = new Peer(broker);
    await attacker.connect('attacker');
    attacker.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: '+/victim/#', qos: 1 }] });
    assert.deepEqual(attacker.take('suback').granted, [1]);
    const victim = new Peer(broker);
    await victim.connect('victim');
    victim.send(publish('devices/victim/cmd', 'secret', 1, 1));
    victim.send(publish('rooms/victim/x', 'open', 1, 2));
    assert.deepEqual(
      attacker.publishes().map((p) => p.topic),
      ['rooms/victim/x'],
    );
  });

  describe('a SUBSCRIBE of more filters than one turn handles', () => {
    const many = { ...config, maxSubscriptionsPerClient: 1000 };
    const count = FILTERS_PER_TURN * 4 + 3;
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    /** Turns of the loop until `peer` has its SUBACK (or a bounded number of them went by). */
    async function subackOf(peer: Peer): Promise<mqttPacket.ISubackPacket> {
      for (let i = 0; i < count && !peer.packets.some((p) => p.cmd === 'suback'); i++) await turn();
      return peer.take('suback');
    }

    it('answers every filter in order, sends the retained messages, and lets no later packet overtake it', async () => {
      const broker = new MqttBroker(many, OPEN);
      const retainer = new Peer(broker);
      await retainer.connect('retainer');
      for (const i of [0, FILTERS_PER_TURN, count - 1]) {
        retainer.send(publish(`many/${i}`, `kept ${i}`, 0, undefined, { retain: true }));
      }
      const sub = new Peer(broker);
      await sub.connect('sub');
      const subscriptions = Array.from({ length: count }, (_, i) => ({
        // Every seventh filter is invalid (0x8F at its place); the QoS differs along the list.
        topic: i % 7 === 3 ? `many/${i}/#/x` : `many/${i}`,
        qos: (i % 3) as 0 | 1 | 2,
      }));
      sub.send({ cmd: 'subscribe', messageId: 9, subscriptions });
      // Behind it, in the same turn: a PUBLISH to the last filter, which it must meet subscribed.
      sub.send(publish(`many/${count - 1}`, 'live', 1, 1));
      assert.equal(
        sub.packets.some((p) => p.cmd === 'suback' || p.cmd === 'puback'),
        false,
        'nothing answered within the turn that read them',
      );
      const suback = await subackOf(sub);
      assert.deepEqual(
        suback.granted,
        subscriptions.map((s, i) => (i % 7 === 3 ? 0x8f : s.qos)),
      );
      assert.equal(sub.take('puback').messageId, 1);
      assert.deepEqual(
        sub
          .publishes()
          .map((p) => String(p.payload))
          .sort(),
        ['kept 0', `kept ${count - 1}`, `kept ${FILTERS_PER_TURN}`, 'live'],
      );
      assert.equal(broker.sessions.get('sub')?.subscriptions.size, count - Math.ceil((count - 3) / 7));
    });

    it('other clients are served between its slices', async () => {
      const broker = new MqttBroker(many, OPEN);
      const sub = new Peer(broker);
      await sub.connect('sub');
      const other = new Peer(broker);
      await other.connect('other');
      const subscriptions = Array.from({ length: count }, (_, i) => ({ topic: `x/${i}/#`, qos: 0 as const }));
      sub.send({ cmd: 'subscribe', messageId: 1, subscriptions });
      await turn();
      other.send({ cmd: 'pingreq' });
      assert.equal(other.take('pingresp').cmd, 'pingresp');
      assert.equal(
        sub.packets.some((p) => p.cmd === 'suback'),
        false,
        'the SUBACK is still to come',
      );
      assert.equal((await subackOf(sub)).granted.length, count);
      assert.equal(
        sub.charged.length,
        Math.ceil(count / FILTERS_PER_TURN),
        'each slice charged to its client',
      );
      assert.deepEqual(other.charged, []);
    });

    it('a client that floods behind it is disconnected (0x97), not held without bound', async () => {
      const broker = new MqttBroker(many, OPEN);
      const sub = new Peer(broker);
      await sub.connect('sub');
      const subscriptions = Array.from({ length: count }, (_, i) => ({ topic: `x/${i}`, qos: 0 as const }));
      sub.send({ cmd: 'subscribe', messageId: 1, subscriptions });
      for (let i = 0; i < 1001 && sub.ended === null; i++) sub.send({ cmd: 'pingreq' });
      const disconnect = sub.packets.find((p) => p.cmd === 'disconnect');
      assert.equal(disconnect?.reasonCode, 0x97);
      assert.notEqual(sub.ended, null);
    });
  });
});

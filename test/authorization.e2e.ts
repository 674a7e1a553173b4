import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Client } from 'graphql-ws';
import { type MqttClient } from 'mqtt';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { type Wampy } from 'wampy';
import WebSocket from 'ws';
import { type BrokerNode, TestCluster } from './support/cluster.js';
import { request, Subscription, transportClient } from './support/graphql-clients.js';
import { MessageQueue } from './support/message-queue.js';
import { connect, connectWithInbox, Inbox, persistentSession } from './support/mqtt-helpers.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { connectWampy, within } from './support/wamp-clients.js';
import { opened } from './support/ws-helpers.js';

/**
 * One rule set, tried from every protocol's real client: MQTT.js, graphql-ws, subscriptions-transport-ws
 * (legacy graphql-ws), wampy in the bus realm, and the chat.v1 example module. `operator` (an MQTT client
 * id) may do anything; everyone else is held to the rules below them.
 */
const AUTHORIZATION = {
  noMatch: 'allow',
  rules: [
    { clientId: 'operator', topics: ['#'], permission: 'allow' },
    { action: 'publish', topics: ['devices/victim/cmd'], permission: 'deny' },
    { topics: ['secret/#'], permission: 'deny' },
    { topics: ['devices/%c/#'], permission: 'allow' },
    { action: 'subscribe', topics: ['devices/#', 'private/#'], permission: 'deny' },
    { who: 'anonymous', action: 'publish', topics: ['chat/quiet'], permission: 'deny' },
    { who: 'anonymous', topics: ['chat/vip'], permission: 'deny' },
  ],
};

/** Topics the operator writes that nobody else may read, then the fence every wildcard below matches. */
const DENIED = ['devices/victim/cmd', 'secret/x', 'private/p'];
const FENCE = 'devices_open/victim/fence';

const TOPIC_QUERY = 'subscription($f: String!) { topic(filter: $f) { topic } }';
const PUBLISH = 'mutation($t: String!) { publish(topic: $t, payload: "x") }';

/** A GraphQL error's code, from a result or a rejection the client gave. */
function codeOf(result: unknown): unknown {
  const errors = (result as { errors?: { extensions?: Record<string, unknown> }[] }).errors;
  return errors?.[0]?.extensions?.['code'];
}

/** How a graphql-ws subscription ended: its first result, or the error it failed with. */
function firstOutcome(client: Client, filter: string): Promise<unknown> {
  return within(
    `the subscription to ${filter}`,
    new Promise((resolve) => {
      const stop = client.subscribe(
        { query: TOPIC_QUERY, variables: { f: filter } },
        {
          next: (value) => {
            stop();
            resolve(value);
          },
          error: (err) => resolve({ errors: err }),
          complete: () => undefined,
        },
      );
    }),
  );
}

/** A legacy (subscriptions-transport-ws) operation's first answer: a result or its errors. */
function legacyFirst(
  client: SubscriptionClient,
  query: string,
  variables: Record<string, unknown>,
): Promise<unknown> {
  return within(
    'the legacy operation',
    new Promise((resolve) => {
      client.request({ query, variables }).subscribe({
        next: (value) => resolve(value),
        error: (err: unknown) => resolve({ errors: Array.isArray(err) ? err : [err] }),
      });
    }),
  );
}

/** The topics a legacy subscription delivers, as they come. */
function legacyTopics(client: SubscriptionClient, filter: string): string[] {
  const topics: string[] = [];
  client.request({ query: TOPIC_QUERY, variables: { f: filter } }).subscribe({
    next: (value) => {
      const topic = (value.data as { topic?: { topic: string } } | null)?.topic?.topic;
      if (topic !== undefined) topics.push(topic);
    },
  });
  return topics;
}

async function chat(url: string): Promise<{ ws: WebSocket; queue: MessageQueue }> {
  const ws = new WebSocket(`${url}/chat`, 'chat.v1');
  const queue = new MessageQueue(ws);
  await opened(ws);
  assert.equal((await queue.json())['type'], 'welcome');
  return { ws, queue };
}

/** The WAMP error URI a refused request failed with. */
async function wampError(operation: Promise<unknown>): Promise<string> {
  try {
    await operation;
  } catch (err) {
    return String((err as { errorUri?: string }).errorUri);
  }
  return 'no error';
}

/** Waits until `seen` holds the fence, then gives what arrived before it. */
async function untilFence(what: string, seen: () => readonly string[]): Promise<readonly string[]> {
  const deadline = Date.now() + 5000;
  while (!seen().includes(FENCE)) {
    if (Date.now() > deadline) throw new Error(`${what}: the fence never arrived (got ${seen().join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return seen();
}

describe('one authorization for every protocol (authorization rules, on the default broker)', () => {
  let broker: TestBroker;
  let operator: MqttClient;
  let watcher: Inbox;
  let graphql: Client;

  before(async () => {
    broker = await startDefaultBroker({ authorization: AUTHORIZATION, mqtt: { sysIntervalSec: 0 } });
    operator = await connect(broker, { clientId: 'operator' });
    watcher = new Inbox(operator);
    await operator.subscribeAsync('#', { qos: 1 });
    graphql = transportClient(`${broker.url}/graphql`);
  });
  after(async () => {
    await operator?.endAsync();
    await graphql?.dispose();
    await broker?.close();
  });

  it('a publish the rules deny is refused in every protocol and reaches nobody', async () => {
    const before = watcher.received.length;
    const device = await connect(broker, { clientId: 'attacker' });
    await assert.rejects(device.publishAsync('devices/victim/cmd', 'x', { qos: 1 }), { code: 0x87 });
    await assert.rejects(device.publishAsync('secret/x', 'x', { qos: 1 }), { code: 0x87 });
    await device.endAsync();

    for (const topic of ['devices/victim/cmd', 'secret/x']) {
      assert.equal(codeOf(await request(graphql, PUBLISH, { t: topic })), 'FORBIDDEN', topic);
    }
    const legacy = new SubscriptionClient(`${broker.url}/graphql`, {}, WebSocket, ['graphql-ws']);
    assert.equal(codeOf(await legacyFirst(legacy, PUBLISH, { t: 'secret/x' })), 'FORBIDDEN');
    legacy.close();

    const wampy = await connectWampy(`${broker.url}/ws`);
    for (const uri of ['devices.victim.cmd', 'secret.x']) {
      assert.equal(
        await wampError(wampy.publish(uri, 'x', { acknowledge: true })),
        'wamp.error.not_authorized',
      );
    }

    const speaker = await chat(broker.url);
    speaker.ws.send(JSON.stringify({ type: 'join', room: 'quiet' }));
    assert.deepEqual(await speaker.queue.json(), { type: 'joined', room: 'quiet' });
    speaker.ws.send(JSON.stringify({ type: 'say', room: 'quiet', text: 'x' }));
    assert.deepEqual(await speaker.queue.json(), {
      type: 'error',
      reason: 'not authorized to speak in quiet',
    });
    speaker.ws.close();

    // The last word, allowed, arrives after everything refused before it: nothing refused got through.
    await wampy.publish(FENCE.replaceAll('/', '.'), 'x');
    await wampy.disconnect();
    const seen = await untilFence('the watcher', () => watcher.received.slice(before).map((m) => m.topic));
    assert.deepEqual(seen, [FENCE]);
  });

  it('a subscription the rules deny whole is refused in every protocol', async () => {
    const device = await connect(broker, { clientId: 'attacker' });
    // MQTT.js rejects a SUBACK that grants nothing, with the SUBACK.
    const refusal = await device
      .subscribeAsync({ 'secret/#': { qos: 1 }, 'devices/victim/#': { qos: 1 }, 'private/#': { qos: 1 } })
      .then(
        () => null,
        (err: { packet?: { granted?: unknown } }) => err.packet?.granted,
      );
    assert.deepEqual(refusal, [0x87, 0x87, 0x87]);
    await device.endAsync();

    for (const filter of ['secret/#', 'devices/+/cmd', 'private/#']) {
      assert.equal(codeOf(await firstOutcome(graphql, filter)), 'FORBIDDEN', filter);
    }
    const legacy = new SubscriptionClient(`${broker.url}/graphql`, {}, WebSocket, ['graphql-ws']);
    assert.equal(codeOf(await legacyFirst(legacy, TOPIC_QUERY, { f: 'secret/#' })), 'FORBIDDEN');
    legacy.close();

    const wampy = await connectWampy(`${broker.url}/ws`);
    assert.equal(await wampError(wampy.subscribe('secret.x', () => undefined)), 'wamp.error.not_authorized');
    assert.equal(
      await wampError(wampy.subscribe('devices.victim.cmd', () => undefined)),
      'wamp.error.not_authorized',
    );
    await wampy.disconnect();

    const reader = await chat(broker.url);
    reader.ws.send(JSON.stringify({ type: 'join', room: 'vip' }));
    assert.deepEqual(await reader.queue.json(), { type: 'error', reason: 'not authorized to join vip' });
    reader.ws.close();
  });

  it("a wildcard gets only what its client may read, in every protocol: never another device's tree", async () => {
    const attacker = await connect(broker, { clientId: 'attacker' });
    const mqttInbox = new Inbox(attacker);
    const granted = await attacker.subscribeAsync({ '#': { qos: 1 }, '+/victim/#': { qos: 1 } });
    assert.deepEqual(
      granted.map((g) => g.qos),
      [1, 1],
    );
    // The victim itself reads its own tree (devices/%c/#).
    const victim = await connect(broker, { clientId: 'victim' });
    const victimInbox = new Inbox(victim);
    await victim.subscribeAsync('devices/victim/#', { qos: 1 });

    const everything = new Subscription(graphql, TOPIC_QUERY, { f: '#' });
    const victimTree = new Subscription(graphql, TOPIC_QUERY, { f: '+/victim/#' });
    const graphqlSeen: string[] = [];
    const legacy = new SubscriptionClient(`${broker.url}/graphql`, {}, WebSocket, ['graphql-ws']);
    const legacySeen = legacyTopics(legacy, '#');

    const wampy: Wampy = await connectWampy(`${broker.url}/ws`);
    const wampSeen: string[] = [];
    const onEvent = (e: { details?: { topic?: string } }): void =>
      void wampSeen.push(String(e.details?.topic));
    await wampy.subscribe('devices', onEvent, { match: 'prefix' });

    // Every subscription above is live once a fence reaches each of them (the MQTT one twice: two filters).
    const live = async (): Promise<void> => {
      for (;;) {
        await operator.publishAsync(FENCE, 'x', { qos: 1 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        const ready =
          mqttInbox.received.length >= 1 &&
          legacySeen.includes(FENCE) &&
          wampSeen.includes(FENCE.replaceAll('/', '.'));
        if (ready) return;
      }
    };
    await within('every subscriber live', live(), 5000);
    const drain = async (subscription: Subscription): Promise<void> => {
      for (;;) {
        const event = await subscription.nextEvent().catch(() => null);
        if (event === null) return;
        graphqlSeen.push(String(event['topic']));
      }
    };
    await Promise.all([drain(everything), drain(victimTree)]);
    const mark = {
      mqtt: mqttInbox.received.length,
      legacy: legacySeen.length,
      wamp: wampSeen.length,
      graphql: graphqlSeen.length,
    };

    for (const topic of DENIED) await operator.publishAsync(topic, 'x', { qos: 1 });
    await operator.publishAsync(FENCE, 'x', { qos: 1 });

    const mqttGot = await untilFence('MQTT', () => mqttInbox.received.slice(mark.mqtt).map((m) => m.topic));
    assert.deepEqual(mqttGot, [FENCE]);
    const legacyGot = await untilFence('legacy GraphQL', () => legacySeen.slice(mark.legacy));
    assert.deepEqual(legacyGot, [FENCE]);
    const wampGot = await untilFence('WAMP', () =>
      wampSeen.slice(mark.wamp).map((uri) => uri.replaceAll('.', '/')),
    );
    assert.deepEqual(wampGot, [FENCE]);
    const first = await everything.nextEvent();
    const second = await victimTree.nextEvent();
    assert.deepEqual([first['topic'], second['topic']], [FENCE, FENCE]);
    // Its own tree reached the victim.
    await victimInbox.waitFor((m) => m.topic === 'devices/victim/cmd');

    everything.stop();
    victimTree.stop();
    legacy.close();
    await wampy.disconnect();
    await attacker.endAsync();
    await victim.endAsync();
  });
});

describe('one authorization across nodes (two broker processes on NATS)', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(2, { config: { authorization: AUTHORIZATION } });
  });
  after(() => cluster?.close());

  it('what another node publishes reaches a wildcard subscriber only where it may read: live, persistent QoS 1 and GraphQL', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const operator = await connect({ url: n1.url }, { clientId: 'operator' });
    // A persistent QoS 1 session reads through its stream consumer; it is away while the messages come.
    const away = await connect({ url: n2.url }, persistentSession('attacker-away'));
    await away.subscribeAsync('#', { qos: 1 });
    await away.endAsync();
    const attacker = await connect({ url: n2.url }, { clientId: 'attacker' });
    const live = new Inbox(attacker);
    await attacker.subscribeAsync('+/victim/#', { qos: 1 });
    const graphql = transportClient(`${n2.url}/graphql`);
    const everything = new Subscription(graphql, TOPIC_QUERY, { f: '#' });

    // Across nodes a subscription is live once the other node's fence reaches it.
    await within(
      'the subscriptions live across the nodes',
      (async () => {
        for (;;) {
          await operator.publishAsync(FENCE, 'x', { qos: 1 });
          await new Promise((resolve) => setTimeout(resolve, 100));
          if (live.received.length > 0) return;
        }
      })(),
      10_000,
    );
    for (;;) {
      const event = await everything.nextEvent().catch(() => null);
      if (event === null) break;
    }
    const mark = live.received.length;
    for (const topic of DENIED) await operator.publishAsync(topic, 'x', { qos: 1 });
    await operator.publishAsync(FENCE, 'x', { qos: 1 });

    assert.deepEqual(
      await untilFence('MQTT on the other node', () => live.received.slice(mark).map((m) => m.topic)),
      [FENCE],
    );
    assert.equal((await everything.nextEvent())['topic'], FENCE);

    const { client: back, inbox: stored } = await connectWithInbox(
      { url: n2.url },
      persistentSession('attacker-away'),
    );
    const got = await untilFence('the persistent session', () => stored.received.map((m) => m.topic));
    assert.ok(
      got.every((topic) => topic === FENCE),
      `stored deliveries: ${got.join(', ')}`,
    );

    everything.stop();
    await graphql.dispose();
    await back.endAsync();
    await attacker.endAsync();
    await operator.endAsync();
  });
});

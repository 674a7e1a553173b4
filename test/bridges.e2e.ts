import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Client } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import WebSocket from 'ws';
import { PROBE, request, Subscription, transportClient, untilDelivered } from './support/graphql-clients.js';
import { connect, Inbox } from './support/mqtt-helpers.js';
import { BOOT, chargePoint } from './support/ocpp.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { connectWampy, deferred, within } from './support/wamp-clients.js';

const TOPIC_QUERY = 'subscription($f: String!) { topic(filter: $f) { topic payload contentType origin } }';

/** The first event a legacy (subscriptions-transport-ws) subscriber gets that is not a readiness probe. */
function legacyEvent(client: SubscriptionClient, filter: string): Promise<Record<string, unknown>> {
  const event = deferred<Record<string, unknown>>();
  client.request({ query: TOPIC_QUERY, variables: { f: filter } }).subscribe({
    next: (value) => {
      const topic = (value.data as { topic?: Record<string, unknown> } | null)?.topic;
      if (topic !== undefined && topic['payload'] !== PROBE) event.resolve(topic);
    },
  });
  return within('the legacy GraphQL event', event.promise);
}

/**
 * The protocols meet on the bus: each test starts at one protocol's real client and ends at
 * another's, through the broker exactly as `npm start` composes it.
 */
describe('bridges between protocols, on the default broker', () => {
  let broker: TestBroker;
  let graphql: Client;

  before(async () => {
    broker = await startDefaultBroker({ mqtt: { sysIntervalSec: 0 } });
    graphql = transportClient(`${broker.url}/graphql`);
  });
  after(async () => {
    await graphql.dispose();
    await broker.close();
  });

  it('an MQTT.js publish reaches a graphql-transport-ws and a legacy graphql-ws subscriber', async () => {
    const current = new Subscription(graphql, TOPIC_QUERY, { f: 'sensors/+/temp' });
    const legacy = new SubscriptionClient(`${broker.url}/graphql`, {}, WebSocket, ['graphql-ws']);
    const legacyGot = legacyEvent(legacy, 'sensors/+/temp');
    // Both subscribers are live once one probe is delivered twice.
    await untilDelivered(graphql, 'sensors/0/temp', 2);

    const device = await connect(broker);
    await device.publishAsync('sensors/1/temp', '21.5', { qos: 1 });
    const event = await current.nextEvent();
    assert.deepEqual([event['topic'], event['payload'], event['origin']], ['sensors/1/temp', '21.5', 'mqtt']);
    const old = await legacyGot;
    assert.deepEqual([old['topic'], old['payload']], ['sensors/1/temp', '21.5']);
    current.stop();
    legacy.close();
    await device.endAsync();
  });

  it('a WAMP subscriber receives an MQTT.js publish, and an MQTT subscriber a WAMP publication', async () => {
    const wampy = await connectWampy(`${broker.url}/ws`);
    const fromMqtt = deferred<unknown>();
    await wampy.subscribe('plant.line1.speed', (e: { argsList?: unknown[] }) =>
      fromMqtt.resolve(e.argsList?.[0]),
    );
    const device = await connect(broker);
    await device.publishAsync('plant/line1/speed', '42', { qos: 1 });
    assert.equal(await within('the MQTT publish at WAMP', fromMqtt.promise), '42');

    const listener = await connect(broker);
    const inbox = new Inbox(listener);
    await listener.subscribeAsync('alerts/#', { qos: 1 });
    await wampy.publish('alerts.fire', 'hall 3');
    const [alert] = await inbox.wait(1);
    assert.deepEqual([alert?.topic, alert?.payload], ['alerts/fire', 'hall 3']);
    await wampy.disconnect();
    await device.endAsync();
    await listener.endAsync();
  });

  it("the publish mutation counts the clients it reached in every protocol, not each protocol's bridge", async () => {
    const publish = async (topic: string) =>
      (await request(graphql, `mutation { publish(topic: "${topic}", payload: "n") }`)).data?.['publish'];
    // Two bridges (MQTT, WAMP) listen to every topic: with no client subscribed, nobody got it.
    assert.equal(await publish('count/nobody'), 0);
    const listener = await connect(broker);
    await listener.subscribeAsync('count/+', { qos: 0 });
    const wampy = await connectWampy(`${broker.url}/ws`);
    await wampy.subscribe('count.both', () => undefined);
    assert.equal(await publish('count/mqtt-only'), 1);
    assert.equal(await publish('count/both'), 2);
    await wampy.disconnect();
    await listener.endAsync();
  });

  it("a charge point's StatusNotification reaches an MQTT subscriber and a GraphQL subscriber", async () => {
    const listener = await connect(broker);
    const inbox = new Inbox(listener);
    await listener.subscribeAsync('ocpp/+/StatusNotification', { qos: 1 });
    const dashboard = new Subscription(graphql, TOPIC_QUERY, { f: 'ocpp/+/StatusNotification' });
    // The MQTT listener counts too: the GraphQL subscription is live once a probe reaches two.
    await untilDelivered(graphql, 'ocpp/probe/StatusNotification', 2);

    const cp = chargePoint(broker.url, 'CP-bridge');
    await cp.connect();
    await cp.call('BootNotification', BOOT);
    const status = { connectorId: 1, errorCode: 'NoError', status: 'Charging' };
    await cp.call('StatusNotification', status);

    // The readiness probes reach this subscriber too; the answer to the CALL may come before the event.
    const received = await inbox.waitFor((m) => m.topic === 'ocpp/CP-bridge/StatusNotification');
    assert.deepEqual((JSON.parse(received.payload) as { request: unknown }).request, status);
    const event = await dashboard.nextEvent();
    assert.equal(event['topic'], 'ocpp/CP-bridge/StatusNotification');
    assert.equal(event['origin'], 'ocpp1.6');
    assert.deepEqual((JSON.parse(String(event['payload'])) as { request: unknown }).request, status);
    dashboard.stop();
    await cp.close();
    await listener.endAsync();
  });
});

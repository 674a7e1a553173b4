import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BrokerNode, until } from './support/cluster.js';
import { consoleCluster, PHONE, signedInOnPhone } from './support/dashboard-page.js';
import { connect, connectWithInbox } from './support/mqtt-helpers.js';

// The dashboard's Trace section on one node of a real three-node cluster, in a real Chromium at a
// phone's width: a trace of one client id, started on node 1, runs on every node; the client connects
// to node 2 and publishes, a subscriber on node 3 receives, and the page shows the publish in on node
// 2 and its delivery on node 3, each with its node. Stopping it on the page stops it everywhere. A
// topic-filter trace read through another node's admin API gathers every node's events.

const ADMIN = 'cluster-trace-admin-0123456789';
const WAIT_MS = 10_000;

interface Trace {
  state: string;
  nodes: { node: string | null; state: string }[];
  missing: string[];
  events: { event: string; node: string | null; client: string | null; topic: string | null }[];
}

describe('cluster: tracing a client from the dashboard of another node', () => {
  const suite = consoleCluster(ADMIN);

  const readAt = async (node: BrokerNode, id: string): Promise<Trace> => {
    const res = await fetch(`${node.http}/admin/v1/traces/${id}`, {
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as Trace;
  };

  it("shows from node 1 a client's publish in on node 2 and its delivery on node 3, and stops it everywhere", async () => {
    const [n1, n2, n3] = suite.nodes;
    // QoS 0 to a clean session: the message crosses the nodes on the bus, not the stream.
    const { client: reader, inbox } = await connectWithInbox(n3, { clientId: 'trace-reader-n3' });
    suite.clients.push(reader);
    await reader.subscribeAsync('traced/+/temp', { qos: 0 });

    const { context, page } = await signedInOnPhone(suite.browser, n1.http, ADMIN);

    await page.getByLabel('Follow').selectOption({ label: 'MQTT client' });
    await page.getByLabel('Client id to trace').fill('trace-device-x');
    await page.getByLabel('For (s)').fill('600');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const shown = page.locator('#trace [data-trace-shown]');
    await shown.locator('[data-trace-state="running"]').waitFor({ timeout: WAIT_MS });
    const id = (await shown.getAttribute('data-trace-shown')) as string;
    const started = await readAt(n1, id);
    assert.deepEqual(started.nodes.map((n) => [n.node, n.state]).sort(), [
      [n1.id, 'running'],
      [n2.id, 'running'],
      [n3.id, 'running'],
    ]);
    assert.deepEqual(started.missing, []);

    // Node 3's subscription reaches node 2 over the bus once it is attracted there: publish until it does.
    const device = await connect(n2, { clientId: 'trace-device-x' });
    suite.clients.push(device);
    let sent = 0;
    await until(
      'a message of trace-device-x on node 2 reached the reader on node 3',
      async () => {
        if (inbox.received.length > 0) return true;
        await device.publishAsync(`traced/${++sent}/temp`, 'secret 21.5', { qos: 0 });
        return false;
      },
      WAIT_MS,
    );
    const topic = (inbox.received[0] as { topic: string }).topic;

    const publishIn = shown.locator(`tr[data-event="publish-in"][data-topic="${topic}"]`);
    const delivered = shown.locator(`tr[data-event="delivered"][data-topic="${topic}"]`);
    await delivered.waitFor({ timeout: WAIT_MS });
    await publishIn.waitFor({ timeout: WAIT_MS });
    assert.equal(await publishIn.getAttribute('data-node'), n2.id);
    assert.equal(await publishIn.locator('[data-label="Node"]').innerText(), n2.id);
    assert.match(await publishIn.locator('[data-label="Outcome"]').innerText(), /^accepted/);
    assert.equal(await delivered.getAttribute('data-node'), n3.id);
    assert.equal(await delivered.locator('[data-label="Node"]').innerText(), n3.id);
    assert.equal(await delivered.locator('[data-label="Client"]').innerText(), 'trace-reader-n3');
    assert.match(
      await delivered.locator('[data-label="Outcome"]').innerText(),
      /^sent \(from trace-device-x\)/,
    );
    // Its connect was on node 2 too; no payload anywhere on the page.
    assert.equal(await shown.locator('tr[data-event="connect"]').getAttribute('data-node'), n2.id);
    assert.doesNotMatch(await page.locator('#trace').innerText(), /secret/);

    // A phone's width: the trace, its table and its buttons fit with no sideways scroll.
    const scrollWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(scrollWidth <= PHONE.width, `the page is ${scrollWidth} px wide in a ${PHONE.width} px screen`);

    await shown.locator('[data-trace-stop]').click();
    await shown.locator('[data-trace-state="ended"]').waitFor({ timeout: WAIT_MS });
    const stopped = await readAt(n3, id);
    assert.deepEqual(
      stopped.nodes.map((n) => n.state),
      ['ended', 'ended', 'ended'],
    );
    await context.close();
  });

  it('a topic-filter trace started on node 3 gathers from node 2 the publish in on node 1 and the deliveries on 2 and 3', async () => {
    const [n1, n2, n3] = suite.nodes;
    const { client: on2, inbox: inbox2 } = await connectWithInbox(n2, { clientId: 'fleet-reader-n2' });
    const { client: on3, inbox: inbox3 } = await connectWithInbox(n3, { clientId: 'fleet-reader-n3' });
    suite.clients.push(on2, on3);
    await on2.subscribeAsync('fleet-trace/#', { qos: 0 });
    await on3.subscribeAsync('fleet-trace/+/status', { qos: 0 });
    const started = await fetch(`${n3.http}/admin/v1/traces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'mqtt-topic', key: 'fleet-trace/+/status' }),
    });
    assert.equal(started.status, 201, await started.clone().text());
    const { id } = (await started.json()) as { id: string };

    const publisher = await connect(n1, { clientId: 'fleet-publisher-n1' });
    suite.clients.push(publisher);
    let sent = 0;
    await until(
      'a status from node 1 reached the readers on nodes 2 and 3',
      async () => {
        const topic = `fleet-trace/${sent}/status`;
        if (
          inbox2.received.some((m) => m.topic === topic) &&
          inbox3.received.some((m) => m.topic === topic)
        ) {
          return true;
        }
        await publisher.publishAsync(`fleet-trace/${++sent}/status`, 'up', { qos: 0 });
        return false;
      },
      WAIT_MS,
    );
    await publisher.publishAsync('fleet-trace/1/other', 'not traced', { qos: 0 });
    await inbox2.waitFor((m) => m.topic === 'fleet-trace/1/other');
    const topic = `fleet-trace/${sent}/status`;
    const trace = await readAt(n2, id);
    assert.deepEqual(trace.missing, []);
    const of = (t: string) =>
      trace.events.filter((e) => e.topic === t).map((e) => [e.event, e.node, e.client]);
    // Sorted: the nodes' clocks order events of one millisecond in no particular way.
    assert.deepEqual(
      of(topic).sort(),
      [
        ['delivered', n2.id, 'fleet-reader-n2'],
        ['delivered', n3.id, 'fleet-reader-n3'],
        ['publish-in', n1.id, 'fleet-publisher-n1'],
      ].sort(),
    );
    assert.deepEqual(of('fleet-trace/1/other'), []);
  });
});

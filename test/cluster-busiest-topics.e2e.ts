import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { type BrokerNode } from './support/cluster.js';
import { consoleCluster, PHONE, signedInOnPhone } from './support/dashboard-page.js';
import { connect } from './support/mqtt-helpers.js';

// The busiest MQTT topics across a real three-node cluster: MQTT.js clients publish on every node to
// topics at different rates, and the admin API of any node (and the dashboard's panel, in Chromium at
// a phone's width) lists each topic's counts summed over the nodes, busiest first, with the nodes that
// counted it; a node that does not answer is named as missing.

const ADMIN = 'cluster-busiest-admin-0123456789';
const WAIT_MS = 10_000;

interface BusiestTopic {
  topic: string;
  messages: number;
  overcount: number;
  perSecond: number;
  nodes: string[];
}

interface BusiestTopicsView {
  topics: BusiestTopic[];
  missing: string[];
}

async function busiest(node: BrokerNode): Promise<{ view: BusiestTopicsView; missing: string | null }> {
  const res = await fetch(`${node.http}/admin/v1/mqtt/topics/busiest`, {
    headers: { Authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(res.status, 200, await res.clone().text());
  return { view: (await res.json()) as BusiestTopicsView, missing: res.headers.get('broker-missing-nodes') };
}

describe('cluster: the busiest MQTT topics across the nodes', () => {
  const suite = consoleCluster(ADMIN);

  it('sums each topic over the nodes that counted it, busiest first, from any node', async () => {
    const [n1, n2, n3] = suite.nodes;
    const on1 = await connect(n1, { clientId: 'busy-on-1' });
    const on2 = await connect(n2, { clientId: 'busy-on-2' });
    const on3 = await connect(n3, { clientId: 'busy-on-3' });
    suite.clients.push(on1, on2, on3);
    const send = async (client: MqttClient, topic: string, times: number): Promise<void> => {
      // QoS 1: each is counted on its node before its PUBACK.
      for (let i = 0; i < times; i++) await client.publishAsync(topic, `m${i}`, { qos: 1 });
    };
    await send(on1, 'hot/a', 6);
    await send(on2, 'hot/a', 5);
    await send(on3, 'hot/a', 4);
    await send(on2, 'warm/b', 8);
    await send(on1, 'cool/c', 3);
    await send(on3, 'cool/c', 2);
    await send(on3, 'cold/d', 1);

    const expected = [
      ['hot/a', 15, 0, [n1.id, n2.id, n3.id].sort()],
      ['warm/b', 8, 0, [n2.id]],
      ['cool/c', 5, 0, [n1.id, n3.id].sort()],
      ['cold/d', 1, 0, [n3.id]],
    ];
    for (const node of [n1, n2, n3]) {
      const { view, missing } = await busiest(node);
      assert.equal(missing, null, `asked of ${node.id}`);
      assert.deepEqual(view.missing, []);
      assert.deepEqual(
        view.topics.map((t) => [t.topic, t.messages, t.overcount, t.nodes]),
        expected,
        `asked of ${node.id}`,
      );
      for (const topic of view.topics) assert.ok(topic.perSecond > 0, topic.topic);
    }

    // The dashboard's panel of another node shows the same, with a Nodes column, and fits a phone.
    const { context, page } = await signedInOnPhone(suite.browser, n2.http, ADMIN);
    const panel = page.locator('[data-panel="mqtt-busiest-topics"]');
    await panel.locator('tr[data-row="cold/d"]').waitFor({ timeout: WAIT_MS });
    assert.match((await panel.locator('h2').textContent()) ?? '', /across the nodes/);
    const rows = await panel
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-row'),
          tr.querySelector('[data-cell="messages"]')?.textContent,
          tr.querySelector('[data-cell="nodes"]')?.textContent,
        ]),
      );
    assert.deepEqual(
      rows,
      expected.map(([topic, messages, , nodes]) => [topic, String(messages), (nodes as string[]).join(', ')]),
    );
    assert.equal(await panel.locator('[data-missing]').count(), 0);
    const scrollWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(scrollWidth <= PHONE.width, `the page is ${scrollWidth} px wide in a ${PHONE.width} px screen`);
    await context.close();
  });

  it('names a node that does not answer as missing, and counts the others', async () => {
    const [n1, n2, n3] = suite.nodes;
    // Paused, n3 is still live to the others for a node timeout: they ask it and it does not answer.
    n3.pause();
    try {
      const { view, missing } = await busiest(n1);
      assert.deepEqual(view.missing, [n3.id]);
      assert.equal(missing, n3.id);
      assert.deepEqual(
        view.topics.map((t) => [t.topic, t.messages, t.nodes]),
        [
          ['hot/a', 11, [n1.id, n2.id].sort()],
          ['warm/b', 8, [n2.id]],
          ['cool/c', 3, [n1.id]],
        ],
      );
    } finally {
      n3.resume();
    }
  });
});

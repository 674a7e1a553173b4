import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { connectWithInbox, startMqttBroker } from './support/mqtt-helpers.js';
import { type TestBroker } from './support/test-broker.js';

const ADMIN = 'publish-admin-token-0123456789';

describe('admin API: publish a test message on the bus', () => {
  let broker: TestBroker;
  let base: string;
  let device: MqttClient;
  let inbox: Awaited<ReturnType<typeof connectWithInbox>>['inbox'];

  before(async () => {
    broker = await startMqttBroker(
      {},
      {},
      {
        admin: { tokens: [ADMIN] },
        authorization: {
          noMatch: 'allow',
          rules: [{ who: 'all', action: 'publish', topics: ['secret/#'], permission: 'deny' }],
        },
      },
    );
    base = broker.url.replace(/^ws/, 'http');
    ({ client: device, inbox } = await connectWithInbox(broker, { clientId: 'publish-listener' }));
    await device.subscribeAsync('ops/#', { qos: 1 });
  });
  after(async () => {
    await device?.endAsync(true);
    await broker?.close();
  });

  const publish = (body: unknown): Promise<Response> =>
    fetch(`${base}/admin/v1/publish`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('reaches an MQTT subscriber, says how many it reached, and is audited without its payload', async () => {
    const res = await publish({ topic: 'ops/test', payload: 'hello from ops', contentType: 'text/plain' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { reached: 1 });
    const [message] = await inbox.wait(1);
    assert.deepEqual([message?.topic, message?.payload], ['ops/test', 'hello from ops']);
    const audit = (await (
      await fetch(`${base}/admin/v1/audit?limit=1`, { headers: { Authorization: `Bearer ${ADMIN}` } })
    ).json()) as { action: string; target: string; after: unknown }[];
    assert.deepEqual(
      [audit[0]?.action, audit[0]?.target, audit[0]?.after],
      ['bus.publish', 'ops/test', { bytes: 14, reached: 1 }],
    );
  });

  it('refuses a filter (400), the broker topics and what the topic rules deny (403)', async () => {
    assert.equal((await publish({ topic: 'ops/+', payload: 'x' })).status, 400);
    assert.equal((await publish({ topic: '', payload: 'x' })).status, 400);
    assert.equal((await publish({ topic: '$SYS/broker/x', payload: 'x' })).status, 403);
    const denied = await publish({ topic: 'secret/keys', payload: 'x' });
    assert.equal(denied.status, 403);
    assert.match(((await denied.json()) as { detail: string }).detail, /may not publish to "secret\/keys"/);
    const unauthenticated = await fetch(`${base}/admin/v1/publish`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '203.0.113.9' },
      body: JSON.stringify({ topic: 'ops/test', payload: 'x' }),
    });
    assert.equal(unauthenticated.status, 401);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lookupView } from './session-dashboard-lookup.js';
import { type MqttSessionView } from './session-view.js';

const connected: MqttSessionView = {
  clientId: 'device-1',
  node: 'n3',
  connection: {
    id: 'c-1',
    transport: 'tcp',
    remoteAddress: '192.0.2.7',
    protocolVersion: 4,
    principal: 'alice',
  },
  expirySec: 0,
  subscriptions: [
    { filter: 'a/#', qos: 1 },
    { filter: '$share/g/b', qos: 0 },
  ],
  queued: 2,
  inflight: 1,
  stream: null,
  awaitingRelease: 0,
  will: { topic: 'wills/device-1', qos: 2, retain: false, delaySec: 30 },
};

function value(view: ReturnType<typeof lookupView>, label: string): string | null | undefined {
  return view.fields.find((f) => f.label === label)?.value;
}

describe('the dashboard lookup of an MQTT session', () => {
  it('shows a connected session: its node, connection, counts, will and subscriptions, with kick and discard', () => {
    const view = lookupView(connected, []);
    assert.equal(view.heading, 'device-1');
    assert.equal(view.node, 'n3');
    assert.deepEqual(
      view.fields.map((f) => [f.label, f.value]),
      [
        ['Connection', 'TCP'],
        ['Address', '192.0.2.7'],
        ['Protocol version', '3.1.1'],
        ['Principal', 'alice'],
        ['Expiry', 'ends with its connection'],
        ['Queued', '2'],
        ['In flight', '1'],
        ['Awaiting release', '0'],
        ['Will', 'wills/device-1 (QoS 2, after 30 s)'],
      ],
    );
    assert.deepEqual(view.tables[0]?.rows, [
      { key: 'a/#', cells: { filter: 'a/#', qos: 1 } },
      { key: '$share/g/b', cells: { filter: '$share/g/b', qos: 0 } },
    ]);
    assert.deepEqual(
      view.actions.map((a) => a.id),
      ['kick', 'discard'],
    );
  });

  it('offers no kick while the session waits for its client', () => {
    const view = lookupView({ ...connected, connection: null, will: null, expirySec: 0xffffffff }, []);
    assert.equal(value(view, 'Connection'), 'not connected');
    assert.equal(value(view, 'Address'), undefined);
    assert.equal(value(view, 'Expiry'), 'never');
    assert.equal(value(view, 'Will'), 'none');
    assert.deepEqual(
      view.actions.map((a) => a.id),
      ['discard'],
    );
  });

  it('carries the nodes that did not answer', () => {
    assert.deepEqual(lookupView(connected, ['n2']).missing, ['n2']);
  });

  it('shows the first 200 subscriptions and says how many there are', () => {
    const subscriptions = Array.from({ length: 250 }, (_, i) => ({ filter: `t/${i}`, qos: 0 }));
    const [table] = lookupView({ ...connected, subscriptions }, []).tables;
    assert.equal(table?.rows.length, 200);
    assert.equal(table?.title, 'Subscriptions (the first 200 of 250)');
  });

  it("shows what the cluster's stream holds for the session when the stream said, after the in-flight count", () => {
    const labels = lookupView({ ...connected, stream: 7 }, []).fields.map((f) => [f.label, f.value]);
    const at = labels.findIndex(([label]) => label === 'In flight');
    assert.deepEqual(labels[at + 1], ['In the stream', '7']);
    assert.equal(
      lookupView(connected, []).fields.some((f) => f.label === 'In the stream'),
      false,
    );
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type SubscriberRow, subscribersView } from './subscribers-dashboard-lookup.js';

function row(clientId: string, filter: string, more: Partial<SubscriberRow> = {}): SubscriberRow {
  return { clientId, node: null, filter, qos: 1, group: null, connected: true, ...more };
}

describe('the dashboard lookup of the subscribers of an MQTT topic', () => {
  it("shows every node's matching subscriptions sorted by client id: node, filter, QoS, group, connection", () => {
    const view = subscribersView(
      'site/a/temp',
      [
        { rows: [row('zed', 'site/#', { node: 'n2', qos: 0, connected: false })], total: 1 },
        {
          rows: [
            row('amy', '$share/g/site/+/temp', { node: 'n1', group: 'g' }),
            row('bob', 'site/a/temp', { node: 'n1' }),
          ],
          total: 2,
        },
      ],
      ['n3'],
    );
    assert.ok(view !== null);
    assert.equal(view.heading, 'site/a/temp');
    assert.deepEqual(view.fields, [{ label: 'Subscriptions', value: '3' }]);
    assert.deepEqual(view.missing, ['n3']);
    assert.deepEqual(view.actions, []);
    const [table] = view.tables;
    assert.equal(table?.title, 'Subscriptions (3)');
    assert.deepEqual(
      table?.rows.map((r) => r.cells),
      [
        {
          client: 'amy',
          node: 'n1',
          filter: '$share/g/site/+/temp',
          qos: 1,
          group: 'g',
          connected: 'connected',
        },
        { client: 'bob', node: 'n1', filter: 'site/a/temp', qos: 1, group: null, connected: 'connected' },
        { client: 'zed', node: 'n2', filter: 'site/#', qos: 0, group: null, connected: 'not connected' },
      ],
    );
    assert.equal(new Set(table?.rows.map((r) => r.key)).size, 3);
  });

  it('is nothing found when no node has a matching subscription', () => {
    assert.equal(subscribersView('t', [{ rows: [], total: 0 }], []), null);
    assert.equal(subscribersView('t', [], ['n2']), null);
  });

  it('shows the first 200 of every node and says how many there are in all', () => {
    const rows = (node: string) =>
      Array.from({ length: 200 }, (_, i) => row(`c-${node}-${i}`, 't', { node }));
    const view = subscribersView(
      't',
      [
        { rows: rows('n1'), total: 230 },
        { rows: rows('n2'), total: 200 },
      ],
      [],
    );
    assert.equal(view?.tables[0]?.rows.length, 200);
    assert.equal(view?.tables[0]?.title, 'Subscriptions (the first 200 of 430)');
    assert.equal(view?.fields[0]?.value, '430');
  });
});

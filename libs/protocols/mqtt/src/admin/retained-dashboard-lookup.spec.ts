import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttMessage } from '../message.js';
import { preview, retainedView } from './retained-dashboard-lookup.js';

function retained(topic: string, payload: Buffer | string, more: Partial<MqttMessage> = {}): MqttMessage {
  return {
    topic,
    payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload,
    qos: 1,
    retain: true,
    publisherId: 'device-1',
    expiresAt: null,
    properties: {},
    ...more,
  };
}

/** When the spec's messages were stored: each topic at its own time. */
const STORED = new Map([
  ['site/a/temp', Date.parse('2026-12-01T02:00:00.000Z')],
  ['site/b/temp', Date.parse('2026-12-01T02:30:00.500Z')],
]);
const storedAt = (topic: string): number | undefined => STORED.get(topic);

describe('the dashboard lookup of MQTT retained messages', () => {
  it('shows each matching message: topic, QoS, bytes, preview, content type, stored time and expiry, with clear', () => {
    const view = retainedView(
      'site/+/temp',
      [
        retained('site/a/temp', '21.5', { properties: { contentType: 'text/plain' } }),
        retained('site/b/temp', Buffer.from([0x00, 0xff, 0x41]), {
          qos: 0,
          expiresAt: Date.parse('2030-01-02T03:04:05.000Z'),
        }),
      ],
      storedAt,
    );
    assert.equal(view.heading, 'site/+/temp');
    assert.equal(view.node, null);
    assert.deepEqual(view.fields, [{ label: 'Matched', value: '2' }]);
    const [table] = view.tables;
    assert.equal(table?.id, 'retained');
    assert.equal(table?.title, 'Retained messages (2)');
    assert.deepEqual(table?.rows, [
      {
        key: 'site/a/temp',
        cells: {
          topic: 'site/a/temp',
          qos: 1,
          bytes: 4,
          preview: '21.5',
          contentType: 'text/plain',
          stored: '2026-12-01T02:00:00.000Z',
          expires: null,
        },
      },
      {
        key: 'site/b/temp',
        cells: {
          topic: 'site/b/temp',
          qos: 0,
          bytes: 3,
          preview: '\\x00\\xffA',
          contentType: null,
          stored: '2026-12-01T02:30:00.500Z',
          expires: '2030-01-02T03:04:05.000Z',
        },
      },
    ]);
    assert.deepEqual(
      view.actions.map((a) => a.id),
      ['clear'],
    );
    assert.match(view.actions[0]?.confirm ?? '', /Clear 2 retained messages matching site\/\+\/temp\?/);
  });

  it('shows the first 200 and says how many matched in all', () => {
    const many = Array.from({ length: 250 }, (_, i) => retained(`t/${i}`, 'x'));
    const view = retainedView('t/#', many, storedAt);
    assert.equal(view.tables[0]?.rows.length, 200);
    assert.equal(view.tables[0]?.title, 'Retained messages (the first 200 of 250)');
    assert.equal(view.fields[0]?.value, '250');
    assert.match(view.actions[0]?.confirm ?? '', /Clear 200 retained messages/);
  });

  it("offers no clear for the broker's own topics under '$'", () => {
    const view = retainedView('$SYS/#', [retained('$SYS/broker/uptime', '12')], storedAt);
    assert.equal(view.tables[0]?.rows.length, 1);
    assert.deepEqual(view.actions, []);
  });
});

describe('a retained payload preview', () => {
  it('shows UTF-8 text as it is, control and format characters escaped, a backslash doubled', () => {
    assert.equal(preview(Buffer.from('{"t":21.5}')), '{"t":21.5}');
    assert.equal(preview(Buffer.from('grüße ✓')), 'grüße ✓');
    assert.equal(preview(Buffer.from('a\nb\tc\u200bd\\e')), 'a\\x0ab\\x09c\\u{200b}d\\\\e');
    assert.equal(preview(Buffer.alloc(0)), '');
  });

  it('shows a payload that is not UTF-8 byte by byte, what is not printable ASCII as \\xNN', () => {
    assert.equal(preview(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x5c])), '\\x89PNG\\x0d\\x0a\\\\');
  });

  it('is at most 64 characters, with … when there is more, never cutting an escape', () => {
    assert.equal(preview(Buffer.from('x'.repeat(64))), 'x'.repeat(64));
    assert.equal(preview(Buffer.from('x'.repeat(65))), `${'x'.repeat(63)}…`);
    assert.equal(preview(Buffer.alloc(1_000_000, 'y')), `${'y'.repeat(63)}…`);
    const binary = preview(Buffer.alloc(100, 0xff));
    assert.equal(binary, `${'\\xff'.repeat(15)}…`);
    assert.ok(binary.length <= 64);
    // A character cut by the bytes read is no reason to call the text binary.
    assert.equal(preview(Buffer.from('é'.repeat(300))), `${'é'.repeat(63)}…`);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMessage, encodeMessage } from './message-codec.js';
import { type MqttMessage } from '../message.js';

describe('messages as bytes for NATS', () => {
  it('round-trip topic, payload bytes, QoS, expiry, publisher and v5 properties', () => {
    const message: MqttMessage = {
      topic: 'home/état/temp',
      payload: Buffer.from([0, 1, 2, 255]),
      qos: 1,
      retain: true,
      publisherId: 'sensor-1',
      expiresAt: 1_800_000_000_000,
      properties: {
        contentType: 'application/octet-stream',
        correlationData: Buffer.from('abc'),
        userProperties: { a: '1', b: ['2', '3'] },
        payloadFormatIndicator: false,
        responseTopic: 'r/1',
      },
    };
    assert.deepEqual(decodeMessage(encodeMessage(message)), message);
  });

  it('keeps only the pass-through properties, each of its type, and refuses a topic that is not a topic name', () => {
    const meta = (extra: object) => {
      const json = Buffer.from(JSON.stringify({ topic: 'a/b', qos: 0, retain: false, ...extra }));
      const header = Buffer.alloc(4);
      header.writeUInt32BE(json.byteLength);
      return Buffer.concat([header, json, Buffer.from('p')]);
    };
    const decoded = decodeMessage(
      meta({
        properties: {
          topicAlias: 3,
          subscriptionIdentifier: 9,
          contentType: 5,
          userProperties: { ok: 'y', bad: 1 },
        },
      }),
    );
    assert.deepEqual(decoded?.properties, { userProperties: { ok: 'y' } });
    assert.equal(decodeMessage(meta({ topic: 'a/+' })), null);
  });

  it('refuses values that are not ours', () => {
    assert.equal(decodeMessage(new Uint8Array([1, 2])), null);
    assert.equal(decodeMessage(Buffer.from([0, 0, 0, 9, 1])), null);
    const notJson = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from('{{{')]);
    assert.equal(decodeMessage(notJson), null);
    const noTopic = Buffer.from('{"qos":0}');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(noTopic.byteLength);
    assert.equal(decodeMessage(Buffer.concat([header, noTopic])), null);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FANOUT_TOPIC,
  readDelivery,
  readPublishResult,
  readServerMessage,
  subscribeMessage,
} from './transport-ws-load.js';

const next = (id: string, topic: unknown): string =>
  JSON.stringify({ id, type: 'next', payload: { data: { topic } } });

describe('graphql-transport-ws load messages', () => {
  it('builds subscribe messages with or without variables', () => {
    assert.deepEqual(JSON.parse(subscribeMessage('a', '{ x }')), {
      id: 'a',
      type: 'subscribe',
      payload: { query: '{ x }' },
    });
    assert.deepEqual(JSON.parse(subscribeMessage('b', 'q', { v: 1 })).payload, {
      query: 'q',
      variables: { v: 1 },
    });
  });

  it('reads server messages and labels what is not one', () => {
    assert.deepEqual(readServerMessage('{"type":"connection_ack","payload":{}}'), { type: 'connection_ack' });
    assert.deepEqual(readServerMessage('{"type":"complete","id":"p1"}'), { type: 'complete', id: 'p1' });
    assert.equal(readServerMessage('nope'), 'server message is not JSON');
    assert.equal(readServerMessage('[1]'), 'unexpected server message type undefined');
    assert.equal(readServerMessage('{"type":"next"}'), '"next" without an id');
  });

  it('reads the event stamp of a delivery on the fan-out subscription', () => {
    assert.deepEqual(readDelivery(next('s', { topic: FANOUT_TOPIC, payload: '7 12.5' }), 's'), {
      seq: 7,
      sentAtMs: 12.5,
    });
  });

  it('labels deliveries that are not events of the fan-out subscription', () => {
    assert.equal(
      readDelivery(next('t', { topic: FANOUT_TOPIC, payload: '7 12.5' }), 's'),
      'subscriber got a next for another id',
    );
    assert.equal(
      readDelivery(next('s', { topic: 'other', payload: '7 12.5' }), 's'),
      'next without the fan-out topic',
    );
    assert.equal(
      readDelivery(next('s', { topic: FANOUT_TOPIC, payload: 'x' }), 's'),
      'next with a malformed payload',
    );
    assert.equal(readDelivery('{"id":"s","type":"complete"}', 's'), 'subscriber got "complete"');
  });

  it("reads a publish mutation's count, and labels GraphQL errors", () => {
    assert.equal(readPublishResult({ data: { publish: 2000 } }), 2000);
    assert.match(String(readPublishResult({ errors: [{ message: 'bad' }] })), /^mutation errors: /);
    assert.equal(readPublishResult({ data: null }), 'mutation result without a publish count');
  });
});

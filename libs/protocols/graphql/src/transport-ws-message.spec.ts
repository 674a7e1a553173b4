import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readTransportWsMessage } from './transport-ws-message.js';

describe('readTransportWsMessage', () => {
  it('accepts every client message', () => {
    for (const message of [
      { type: 'connection_init' },
      { type: 'connection_init', payload: { token: 'x' } },
      { type: 'ping' },
      { type: 'pong', payload: { a: 1 } },
      { type: 'subscribe', id: '1', payload: { query: '{ status { connections } }' } },
      {
        type: 'subscribe',
        id: '1',
        payload: { query: 'query Q($a: Int) { x }', variables: { a: 1 }, operationName: 'Q' },
      },
      { type: 'complete', id: '1' },
    ]) {
      const read = readTransportWsMessage(JSON.stringify(message));
      assert.deepEqual(read, {
        ok: true,
        message: { type: message.type, id: 'id' in message ? message.id : undefined },
      });
    }
  });

  it('names what is wrong with a bad message', () => {
    for (const [text, reason] of [
      ['{', /not JSON/],
      ['[]', /expected to be an object, but got array/],
      ['{}', /missing the 'type' property/],
      ['{"type":"dance"}', /Invalid message 'type' property "dance"/],
      ['{"type":"subscribe","payload":{"query":"{x}"}}', /'id' property to be a string/],
      ['{"type":"subscribe","id":"","payload":{"query":"{x}"}}', /non-empty 'id'/],
      ['{"type":"subscribe","id":"1","payload":{}}', /'query' property to be a string/],
      ['{"type":"connection_init","payload":"token"}', /payload' property to be an object/],
      ['{"type":"complete"}', /'id' property to be a string/],
      ['{"type":"next","id":"1","payload":{}}', /"next" is sent by servers/],
      ['{"type":"connection_ack"}', /"connection_ack" is sent by servers/],
    ] as const) {
      const read = readTransportWsMessage(text);
      assert.match(read.ok ? 'accepted' : read.problem, reason, text);
    }
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLegacyMessage } from './legacy-message.js';

describe('parseLegacyMessage', () => {
  it('parses every client message', () => {
    assert.deepEqual(parseLegacyMessage('{"type":"connection_init"}'), {
      ok: true,
      message: { type: 'connection_init', payload: undefined },
    });
    assert.deepEqual(parseLegacyMessage('{"type":"connection_init","payload":{"token":"t"}}'), {
      ok: true,
      message: { type: 'connection_init', payload: { token: 't' } },
    });
    assert.deepEqual(
      parseLegacyMessage('{"type":"start","id":"1","payload":{"query":"{a}","variables":null}}'),
      {
        ok: true,
        message: { type: 'start', id: '1', payload: { query: '{a}', variables: null } },
      },
    );
    assert.deepEqual(parseLegacyMessage('{"type":"stop","id":"1"}'), {
      ok: true,
      message: { type: 'stop', id: '1' },
    });
    assert.deepEqual(parseLegacyMessage('{"type":"connection_terminate"}'), {
      ok: true,
      message: { type: 'connection_terminate' },
    });
  });

  it('refuses bad messages with a reason; a bad start payload names its operation', () => {
    for (const [text, problem, id] of [
      ['nope', 'Invalid message: not JSON', undefined],
      ['[1]', 'Invalid message: not a JSON object', undefined],
      [
        '{"type":"subscribe"}',
        'Invalid message: unknown type "subscribe" (expected one of connection_init, start, stop, connection_terminate)',
        undefined,
      ],
      [
        '{}',
        'Invalid message: unknown type undefined (expected one of connection_init, start, stop, connection_terminate)',
        undefined,
      ],
      [
        '{"type":"connection_init","payload":"token"}',
        'Invalid connection_init: the payload must be an object',
        undefined,
      ],
      [
        '{"type":"start","id":1,"payload":{"query":"{a}"}}',
        'Invalid start: the id must be a non-empty string',
        undefined,
      ],
      ['{"type":"stop"}', 'Invalid stop: the id must be a non-empty string', undefined],
      ['{"type":"start","id":"7"}', 'Invalid start: the payload must be an object', '7'],
      [
        '{"type":"start","id":"7","payload":{"query":1}}',
        'Invalid start: payload.query must be a string',
        '7',
      ],
      [
        '{"type":"start","id":"7","payload":{"query":"{a}","variables":[]}}',
        'Invalid start: payload.variables must be an object',
        '7',
      ],
      [
        '{"type":"start","id":"7","payload":{"query":"{a}","operationName":3}}',
        'Invalid start: payload.operationName must be a string',
        '7',
      ],
    ] as const) {
      const expected = id === undefined ? { ok: false, problem } : { ok: false, problem, id };
      assert.deepEqual(parseLegacyMessage(text), expected, text);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventText, parseEventText } from './event-payload.js';

describe('event payload', () => {
  it('round-trips the sequence number and the publish time to the microsecond', () => {
    assert.deepEqual(parseEventText(eventText(42, 1234.56789)), { seq: 42, sentAtMs: 1234.568 });
  });

  it('refuses anything else', () => {
    for (const text of ['', '42', '42 ', 'x 1.5', '-1 2', '1 2 3', '1 2e3']) {
      assert.equal(parseEventText(text), null, text);
    }
  });
});

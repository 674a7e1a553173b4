import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StreamEvents } from './stream-events.js';

const next = (id: string, payload: unknown = { data: { x: 1 } }) =>
  JSON.stringify({ id, type: 'next', payload });

describe('StreamEvents: which sends are a subscription’s events', () => {
  it('a next of a started subscription is an event; of a query, after its end, or another type, not', () => {
    const streams = new StreamEvents();
    assert.equal(streams.isEvent(next('s1')), false);
    streams.started('s1');
    assert.equal(streams.isEvent(next('s1')), true);
    assert.equal(streams.isEvent(next('q1')), false);
    assert.equal(streams.isEvent(JSON.stringify({ id: 's1', type: 'complete' })), false);
    assert.equal(streams.isEvent(JSON.stringify({ id: 's1', type: 'error', payload: [] })), false);
    streams.ended('s1');
    assert.equal(streams.isEvent(next('s1')), false);
  });

  it('ids with escapes, and payloads that look like a next, are read right', () => {
    const streams = new StreamEvents();
    streams.started('a"b\\c');
    streams.started('plain');
    assert.equal(streams.isEvent(next('a"b\\c')), true);
    assert.equal(streams.isEvent(next('x', { data: { text: '{"id":"plain","type":"next"' } })), false);
  });
});

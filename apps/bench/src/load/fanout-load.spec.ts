import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type WebSocket from 'ws';
import { runFanout, type DeliverySink, type FanoutClients } from './fanout-load.js';

/** In-process clients: a publish reaches every sink on the next tick, through `route` when given. */
function fakeClients(route?: (seq: number, index: number) => number[]): FanoutClients {
  const sinks: DeliverySink[] = [];
  const socket = new EventEmitter() as unknown as WebSocket;
  return {
    openSubscriber: (sink) => {
      sinks.push(sink);
      return Promise.resolve(socket);
    },
    openPublisher: () =>
      Promise.resolve({
        socket,
        publish: (seq, sentAt) =>
          setImmediate(() =>
            sinks.forEach((sink, index) => {
              for (const s of route === undefined ? [seq] : route(seq, index)) sink.deliver(s, sentAt);
            }),
          ),
      }),
  };
}

const settings = { subscribers: 5, inFlight: 2, warmupMs: 20, durationMs: 100, timeoutMs: 300 };

describe('runFanout', () => {
  it('counts every delivery in the window, with no errors when every subscriber gets every event', async () => {
    const result = await runFanout(fakeClients(), settings);
    assert.deepEqual([...result.errors], []);
    assert.ok(result.operations > 0);
    assert.equal(result.latenciesMs.length, result.operations);
  });

  it('counts a lost event, and ends the round instead of waiting for it', async () => {
    const result = await runFanout(
      fakeClients((seq, index) => (seq === 3 && index === 1 ? [] : [seq])),
      settings,
    );
    const errors = Object.fromEntries(result.errors);
    assert.equal(errors['event not received by every subscriber within 300 ms'], 1);
    assert.equal(errors['deliveries lost (event timed out)'], 1);
    assert.ok((errors['event out of order, duplicated or lost'] ?? 0) >= 1);
  });

  it('counts duplicated events', async () => {
    const result = await runFanout(
      fakeClients((seq, index) => (seq === 2 && index === 0 ? [seq, seq] : [seq])),
      settings,
    );
    assert.equal(Object.fromEntries(result.errors)['event out of order, duplicated or lost'], 1);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayMetrics, type TraceSink } from '#broker/gateway';
import { MAX_ENDED_TRACES, MAX_RUNNING_TRACES, TraceRecorder, TraceRefusedError } from './trace-recorder.js';

/** A recorder with one kind, "client", whose followers tests write through. */
function recorder(): { recorder: TraceRecorder; sinks: Map<string, TraceSink> } {
  const metrics = new GatewayMetrics();
  const sinks = new Map<string, TraceSink>();
  metrics.traces.add({
    id: 'client',
    title: 'Client',
    keyLabel: 'Client id',
    invalid: (key) => (key.startsWith('bad') ? 'not a client id' : null),
    follow: (key, sink) => {
      sinks.set(key, sink);
      return () => sinks.delete(key);
    },
  });
  return { recorder: new TraceRecorder(metrics), sinks };
}

const spec = (id: string, key = id, durationMs = 60_000) => ({
  id,
  kind: 'client',
  key,
  durationMs,
  startedBy: 'ops',
});

function refusal(run: () => unknown): TraceRefusedError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof TraceRefusedError);
    return err;
  }
  return assert.fail('not refused');
}

describe('TraceRecorder', () => {
  it('follows its key until stopped, stamping each record with time and node; its events stay readable', (t) => {
    const { recorder: r, sinks } = recorder();
    t.after(() => r.onModuleDestroy());
    const started = r.start(spec('t1', 'dev-1'));
    assert.deepEqual(
      [started.id, started.kind, started.key, started.startedBy, started.state, started.node],
      ['t1', 'client', 'dev-1', 'ops', 'running', null],
    );
    const record = {
      event: 'connect',
      client: 'dev-1',
      topic: null,
      qos: null,
      packetId: null,
      bytes: null,
      outcome: 'accepted',
      reason: null,
    };
    sinks.get('dev-1')?.write(record);
    const read = r.read('t1');
    assert.equal(read?.events.length, 1);
    assert.deepEqual({ ...read?.events[0], time: undefined }, { ...record, node: null, time: undefined });
    assert.equal(new Date(read?.events[0]?.time ?? '').toISOString(), read?.events[0]?.time);

    assert.equal(r.stop('t1')?.state, 'ended');
    assert.equal(sinks.has('dev-1'), false);
    assert.equal(r.read('t1')?.events.length, 1);
    assert.equal(r.stop('nothing'), null);
    assert.equal(r.read('nothing'), null);
  });

  it('starts one id once: a second start answers what runs', (t) => {
    const { recorder: r } = recorder();
    t.after(() => r.onModuleDestroy());
    r.start(spec('t1'));
    r.start(spec('t1'));
    assert.equal(r.list().length, 1);
    assert.equal(r.running, 1);
  });

  it('refuses an unknown kind, a key the kind cannot follow and a duration that is no positive whole ms (400)', (t) => {
    const { recorder: r } = recorder();
    t.after(() => r.onModuleDestroy());
    assert.equal(refusal(() => r.start({ ...spec('a'), kind: 'other' })).status, 400);
    const bad = refusal(() => r.start(spec('b', 'bad-key')));
    assert.deepEqual([bad.status, bad.message], [400, 'key: not a client id']);
    for (const durationMs of [0, -1, 1.5, Number.NaN]) {
      assert.equal(refusal(() => r.start(spec('c', 'c', durationMs))).status, 400);
    }
    assert.deepEqual(r.list(), []);
  });

  it(`runs at most ${MAX_RUNNING_TRACES} at once (409), and one more once one stopped`, (t) => {
    const { recorder: r } = recorder();
    t.after(() => r.onModuleDestroy());
    for (let n = 0; n < MAX_RUNNING_TRACES; n++) r.start(spec(`t${n}`));
    const refused = refusal(() => r.start(spec('one-more')));
    assert.equal(refused.status, 409);
    assert.match(refused.message, /8 traces are running/);
    r.stop('t0');
    assert.equal(r.start(spec('one-more')).state, 'running');
  });

  it(`keeps the latest ${MAX_ENDED_TRACES} ended traces, forgetting the first ones`, (t) => {
    const { recorder: r } = recorder();
    t.after(() => r.onModuleDestroy());
    for (let n = 0; n < MAX_ENDED_TRACES + 2; n++) {
      r.start(spec(`t${n}`));
      r.stop(`t${n}`);
    }
    assert.deepEqual(
      r.list().map((s) => s.id),
      Array.from({ length: MAX_ENDED_TRACES }, (_, n) => `t${n + 2}`),
    );
  });

  it('ends by itself when its time is up, and lets go of what it followed', async (t) => {
    const { recorder: r, sinks } = recorder();
    t.after(() => r.onModuleDestroy());
    r.start(spec('brief', 'dev-2', 20));
    for (let waited = 0; r.running > 0; waited += 10) {
      assert.ok(waited < 10_000, 'never ended');
      await sleep(10);
    }
    assert.equal(r.list()[0]?.state, 'ended');
    assert.equal(sinks.has('dev-2'), false);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TestCluster } from './support/cluster.js';
import {
  type Nemesis,
  reportTable,
  runNemesis,
  seeded,
  sentAfterMoveContext,
} from './support/nemesis-run.js';

/** The faults of the short run, each once, in an order the seed draws. */
function shuffled(nemeses: readonly Nemesis[], random: () => number): Nemesis[] {
  const order = [...nemeses];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as Nemesis, order[i] as Nemesis];
  }
  return order;
}

describe('nemesis: a short seeded run (npm run chaos runs the long one)', () => {
  // nats-server restarts are left to the long run: under QoS 1 traffic they still lose about one
  // acknowledged message each (issue 36), which this test would only hide behind a bound.
  it('nodes killed, paused and cut off from NATS past nodeTimeoutMs: nothing acknowledged lost, every repeat with DUP, QoS 2 exactly once, no will while its device is connected, retained messages kept, every call answered once, served to the end', async () => {
    // NEMESIS_SEED repeats a run's schedule; the timing is the machine's.
    const seed = Number(process.env['NEMESIS_SEED'] ?? 36);
    const schedule = shuffled(['kill', 'pause', 'cut', 'kill', 'pause'], seeded(seed + 1));
    const cluster = await TestCluster.start(3, { proxied: true });
    try {
      const report = await runNemesis(cluster, { seed, schedule, devices: 2, settleMs: 3000 });
      const table = `${reportTable(report)}\n${cluster.warnings()}`;
      assert.ok(report.acked > 200, `the workload ran: ${table}`);
      assert.deepEqual(
        report.lost.map((l) => `${l.device} #${l.n} after ${l.after?.nemesis ?? 'no fault'}`),
        [],
        table,
      );
      assert.equal(report.repeatsWithoutDup, 0, table);
      assert.equal(report.qos2Repeats, 0, table);
      assert.equal(report.willsWhileConnected, 0, table);
      assert.deepEqual(report.sentAfterMove, [], `${table}\n${sentAfterMoveContext(cluster)}`);
      assert.deepEqual(report.stopped, [], table);
      assert.deepEqual(report.crashed, [], table);
      assert.equal(report.faults.length, schedule.length);
      // Retained messages: no new subscriber got an older one (or none) after a fault had settled.
      assert.deepEqual(report.retained.stale, [], table);
      assert.deepEqual(report.retained.wrongAtEnd, [], table);
      assert.deepEqual(report.shared.lost, [], table);
      assert.equal(report.shared.repeatsWithoutDup, 0, table);
      // Calls: each answered, by its callee's echo or an error, once; none left hanging.
      for (const calls of [report.wamp, report.ocpp]) {
        assert.equal(calls.unanswered, 0, table);
        assert.equal(calls.wrong, 0, table);
        assert.equal(calls.invokedTwice, 0, table);
      }
    } finally {
      await cluster.close();
    }
  });
});

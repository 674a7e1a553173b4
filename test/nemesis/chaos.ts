/**
 * The long nemesis run (`npm run chaos -- --minutes 30`): three broker nodes on one nats-server, faults
 * drawn from every nemesis (or those of `--nemeses`) until the time is up, then the checker's table
 * (docs/cluster.md's guarantees table takes its figures). NEMESIS_SEED repeats a schedule. Exits 1 when an
 * acknowledged message was lost, a repeat went without DUP, a QoS 2 message arrived twice, a will went
 * out while its device was connected, a node sent a message to a connection after its session's record
 * had moved to another node (the test process's own view of that is reported, not judged: it cannot
 * tell a message read late from one sent late), a retained message was lost or served stale, a shared
 * subscription's group lost a message, a WAMP or OCPP call went unanswered, was answered wrongly or ran
 * twice, a node ended on its own, or the cluster stopped serving.
 */
import { parseArgs } from 'node:util';
import { TestCluster } from '../support/cluster.js';
import {
  lostContext,
  qos2TwiceContext,
  NEMESES,
  reportTable,
  runNemesis,
  sentAfterMoveContext,
} from '../support/nemesis-run.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    // A probe of some faults only: `--nemeses cut,nats-kill`.
    nemeses: { type: 'string', default: NEMESES.join(',') },
    // nats-server syncs each JetStream write before acknowledging it (2.10 and later).
    'sync-always': { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const nemeses = values.nemeses.split(',').map((name) => {
  const nemesis = NEMESES.find((known) => known === name.trim());
  if (nemesis === undefined) throw new Error(`--nemeses: ${name} is not one of ${NEMESES.join(', ')}`);
  return nemesis;
});
const seed = Number(process.env['NEMESIS_SEED'] ?? Math.floor(Math.random() * 1_000_000));
const started = new Date().toISOString();
const cluster = await TestCluster.start(3, { proxied: true, natsSyncAlways: values['sync-always'] });
try {
  const report = await runNemesis(cluster, {
    seed,
    schedule: { deadline: performance.now() + minutes * 60_000, nemeses },
    devices: 4,
    settleMs: 4000,
    log: (line) => console.log(`${new Date().toISOString()} ${line}`),
  });
  const sync = values['sync-always'] ? ', nats-server sync_interval: always' : '';
  console.log(`\nnemesis run of ${minutes} min from ${started}${sync}\n\n${reportTable(report)}`);
  // What the nodes warned of, counted, for a reader tracing a loss or a repeat to what a node saw.
  const warned = new Map<string, number>();
  for (const node of cluster.nodes) {
    for (const line of node.logLines()) {
      const what = `${node.id}: ${String(line['msg'])}`;
      if (Number(line['level']) >= 40) warned.set(what, (warned.get(what) ?? 0) + 1);
    }
  }
  if (report.sentAfterMove.length > 0) {
    console.log(`\nsent after a move, with what the nodes logged before:\n${sentAfterMoveContext(cluster)}`);
  }
  if (report.qos2Twice.length > 0) {
    console.log(`\nQoS 2 twice, with what the nodes logged before:\n${qos2TwiceContext(cluster, report)}`);
  }
  if (report.lost.length > 0) {
    console.log(
      `\nlost, with what the nodes logged around its acknowledgement:\n${lostContext(cluster, report)}`,
    );
  }
  console.log(
    `\nwarnings and errors, by node:\n${[...warned].map(([what, n]) => `${n} × ${what}`).join('\n')}`,
  );
  const broken =
    report.repeatsWithoutDup > 0 ||
    report.qos2Repeats > 0 ||
    report.willsWhileConnected > 0 ||
    report.sentAfterMove.length > 0 ||
    report.stopped.length > 0 ||
    report.crashed.length > 0 ||
    report.retained.stale.length > 0 ||
    report.retained.wrongAtEnd.length > 0 ||
    report.shared.lost.length > 0 ||
    report.shared.repeatsWithoutDup > 0 ||
    [report.wamp, report.ocpp].some((calls) => calls.unanswered + calls.wrong + calls.invokedTwice > 0);
  // nats-server 2.9 loses what JetStream had not flushed when it is killed: those losses are reported apart.
  const lostElsewhere = report.lost.filter((l) => l.after?.nemesis !== 'nats-kill').length;
  process.exitCode = broken || lostElsewhere > 0 ? 1 : 0;
} finally {
  await cluster.close();
}

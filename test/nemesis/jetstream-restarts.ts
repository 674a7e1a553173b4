/**
 * JetStream alone, no broker: is an acknowledged message kept across nats-server restarts? One interest
 * stream with one durable consumer read and acknowledged as it goes (as the broker's MQTT stream is),
 * four publishers awaiting each PubAck, and nats-server restarted `--restarts` times (SIGTERM, or
 * `--signal SIGKILL`; `--sync-always` for `sync_interval: always`). Prints what was acknowledged, what the consumer got, the acknowledged messages
 * it never got, and the stream sequences a PubAck named twice (a server that forgot a write reuses
 * its sequence). Run: `npm run build && node dist/test/nemesis/jetstream-restarts.js`.
 */
import { parseArgs } from 'node:util';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { TestNats } from '../support/cluster.js';

const { values } = parseArgs({
  options: {
    restarts: { type: 'string', default: '10' },
    signal: { type: 'string', default: 'SIGTERM' },
    // Each write synced before its PubAck (nats-server 2.10+).
    'sync-always': { type: 'boolean', default: false },
  },
});
const signal = values.signal === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const nats = await TestNats.start({ syncAlways: values['sync-always'] });
const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
try {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'S', subjects: ['s.>'], retention: RetentionPolicy.Interest });
  await jsm.consumers.add('S', { durable_name: 'c', ack_policy: AckPolicy.Explicit, filter_subject: 's.x' });
  const js = jetstream(nc);
  const seen = new Set<string>();
  let reading = true;
  let publishing = true;
  /** The consume under way: stopped at the end, or its loop would wait for a message forever. */
  const consuming: { current: { stop(): void } | null } = { current: null };
  const reader = (async () => {
    while (reading) {
      try {
        const messages = await (
          await js.consumers.get('S', 'c')
        ).consume({ max_messages: 64, expires: 2000 });
        consuming.current = messages;
        for await (const m of messages) {
          seen.add(m.string());
          m.ack();
          if (!reading) break;
        }
      } catch {
        await sleep(200);
      }
    }
  })();
  const acked: { n: number; seq: number }[] = [];
  let next = 1;
  const publisher = async () => {
    while (publishing) {
      const n = next++;
      try {
        acked.push({ n, seq: (await js.publish('s.x', String(n), { timeout: 3000 })).seq });
      } catch {
        // Not acknowledged: nothing promised.
      }
      await sleep(20);
    }
  };
  const publishers = Promise.all([publisher(), publisher(), publisher(), publisher()]);
  for (let i = 0; i < Number(values.restarts); i++) {
    await sleep(1500);
    await nats.stop(signal);
    await nats.restart();
  }
  await sleep(1500);
  publishing = false;
  await publishers;
  // The reader catches up on what was acknowledged (and redelivers what it had not acknowledged) first.
  await sleep(6000);
  reading = false;
  consuming.current?.stop();
  await reader;
  const lost = acked.filter(({ n }) => !seen.has(String(n)));
  const seqs = acked.map(({ seq }) => seq);
  const reused = seqs.length - new Set(seqs).size;
  console.log(
    `nats-server restarted ${values.restarts} times (${signal}): ${acked.length} acknowledged, ` +
      `${lost.length} never delivered, ${reused} sequences acknowledged twice` +
      (lost.length > 0 ? `; lost: ${lost.map(({ n, seq }) => `${n}@${seq}`).join(' ')}` : ''),
  );
  process.exitCode = lost.length > 0 ? 1 : 0;
} finally {
  await nc.close();
  await nats.close();
}

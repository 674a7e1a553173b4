import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { type ClusterConfig } from '#broker/config';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pino, { type Logger } from 'pino';

/** The machine's NATS with JetStream; specs fail, not skip, when it does not answer. */
export const NATS_URL = process.env['TEST_NATS_URL'] ?? 'nats://127.0.0.1:4222';

/** A cluster of its own on the shared NATS, with short timers so membership changes show quickly. */
export function testClusterConfig(overrides: Partial<ClusterConfig> = {}): ClusterConfig {
  return {
    natsUrl: [NATS_URL],
    name: `t${randomBytes(5).toString('hex')}`,
    heartbeatMs: 200,
    nodeTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    replicas: 1,
    ...overrides,
  };
}

/** A logger whose lines the spec reads. */
export function capturedLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return {
    logger: pino({ level: 'debug' }, sink),
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Deletes the KV buckets a test cluster made, so the shared NATS does not collect them. */
export async function removeClusterState(name: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.startsWith(`KV_${name}-`)) await jsm.streams.delete(stream.config.name);
    }
  } finally {
    await nc.close();
  }
}

/** Polls `condition` every 20 ms until it holds, failing with `what` after `timeoutMs`. */
export async function eventually(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

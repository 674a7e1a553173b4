import { Bystander } from '../bystander.js';
import { ErrorCounts } from '../load/error-counts.js';
import { BenchClient } from '../mqtt/bench-client.js';
import { PublishTemplate } from '../mqtt/mqtt-wire.js';
import { withTimeout } from '../protocol-bench/async-util.js';
import { summarizeLatencies, type LatencySummary } from '../stats.js';
import { clientCloseFrame } from '../upgrade-request.js';
import { openRaw } from './raw-connection.js';

const TIMEOUT_MS = 10_000;
const TOPIC = 'scale/probe';

/** p50/p99 of one measurement; errors counted by label in the run's ErrorCounts. */
export interface Latencies {
  readonly handshake: LatencySummary;
  readonly message: LatencySummary;
  /** The broker's chat round trip; null for Mosquitto. */
  readonly chat: LatencySummary | null;
}

/** The three measurements one after the other, each `samples` sequential operations. */
export async function measureLatencies(
  port: number,
  samples: number,
  withChat: boolean,
  errors: ErrorCounts,
  phase: string,
): Promise<Latencies> {
  return {
    handshake: await handshakeLatencies(port, samples, errors, phase),
    message: await messageLatencies(port, samples, errors, phase),
    chat: withChat ? await chatLatencies(port, samples, errors, phase) : null,
  };
}

/** New MQTT-over-WebSocket clients: TCP connect, upgrade, 101, CONNECT, CONNACK; then a close frame. */
async function handshakeLatencies(
  port: number,
  samples: number,
  errors: ErrorCounts,
  phase: string,
): Promise<LatencySummary> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    try {
      const socket = await openRaw(
        { port, kind: 'mqtt', localAddress: '127.0.0.1', clientId: `probe-${phase}-${i}` },
        TIMEOUT_MS,
      );
      latencies.push(performance.now() - started);
      socket.end(clientCloseFrame());
    } catch (err) {
      errors.add(`${phase} handshake probe: ${(err as Error).message}`);
    }
  }
  return summarizeLatencies(latencies);
}

/** An active MQTT pair: each QoS 0 publish sent once the previous one arrived at the subscriber. */
async function messageLatencies(
  port: number,
  samples: number,
  errors: ErrorCounts,
  phase: string,
): Promise<LatencySummary> {
  const url = `ws://127.0.0.1:${port}/mqtt`;
  const onError = (label: string): void => errors.add(`${phase} message probe: ${label}`);
  let arrived: (sentAt: number) => void = () => undefined;
  const subscriber = await BenchClient.connect(
    url,
    `probe-sub-${phase}`,
    { onPublish: (publish) => arrived(publish.sentAt), onError },
    TIMEOUT_MS,
  );
  const publisher = await BenchClient.connect(url, `probe-pub-${phase}`, { onError }, TIMEOUT_MS);
  const latencies: number[] = [];
  try {
    await subscriber.subscribe(TOPIC, 0, TIMEOUT_MS);
    const template = new PublishTemplate(TOPIC, 0, 0);
    for (let seq = 0; seq < samples; seq++) {
      const heard = new Promise<number>((resolve) => (arrived = resolve));
      publisher.send(template.build(seq, performance.now(), 0));
      try {
        const sentAt = await withTimeout(heard, TIMEOUT_MS, 'publish');
        latencies.push(performance.now() - sentAt);
      } catch (err) {
        onError((err as Error).message);
      }
    }
  } finally {
    await Promise.all([subscriber.close(TIMEOUT_MS), publisher.close(TIMEOUT_MS)]);
  }
  return summarizeLatencies(latencies);
}

/** The broker's chat round trip (say, hear it back), sequential. */
async function chatLatencies(
  port: number,
  samples: number,
  errors: ErrorCounts,
  phase: string,
): Promise<LatencySummary> {
  const bystander = await Bystander.open(port);
  try {
    const rtts = await bystander.measure(Infinity, 0, samples);
    if (rtts.errors > 0) errors.add(`${phase} chat probe: no answer within 10 s`, rtts.errors);
    return summarizeLatencies(rtts.latencies);
  } finally {
    bystander.close();
  }
}

import { withTimeout } from '../protocol-bench/async-util.js';
import { BenchClient } from './bench-client.js';
import { packetIdFor, PublishTemplate } from './mqtt-wire.js';
import { type MqttServer } from './mqtt-servers.js';

const PREFLIGHT_TIMEOUT_MS = 5_000;

/**
 * Before any timing: a QoS 1 message published by one client must reach a subscriber, in the bench
 * payload format, and be acknowledged to its publisher; else the numbers would mean nothing.
 */
export async function expectDelivery(server: MqttServer): Promise<void> {
  const failures: string[] = [];
  const onError = (label: string): void => {
    failures.push(label);
  };
  let received: (seq: number) => void = () => undefined;
  let acked: () => void = () => undefined;
  const arrived = new Promise<number>((resolve) => (received = resolve));
  const acknowledged = new Promise<void>((resolve) => (acked = resolve));
  const subscriber = await BenchClient.connect(
    server.url,
    'preflight-sub',
    { onPublish: (publish) => received(publish.seq), onError },
    PREFLIGHT_TIMEOUT_MS,
  );
  const publisher = await BenchClient.connect(
    server.url,
    'preflight-pub',
    { onPuback: () => acked(), onError },
    PREFLIGHT_TIMEOUT_MS,
  );
  try {
    await subscriber.subscribe('preflight/check', 1, PREFLIGHT_TIMEOUT_MS);
    publisher.send(
      new PublishTemplate('preflight/check', 1, 0).build(41, performance.now(), packetIdFor(41)),
    );
    const seq = await withTimeout(arrived, PREFLIGHT_TIMEOUT_MS, `${server.kind}: preflight message`);
    await withTimeout(acknowledged, PREFLIGHT_TIMEOUT_MS, `${server.kind}: preflight PUBACK`);
    if (seq !== 41) failures.push(`received sequence ${seq}, sent 41`);
  } finally {
    await Promise.all([subscriber.close(PREFLIGHT_TIMEOUT_MS), publisher.close(PREFLIGHT_TIMEOUT_MS)]);
  }
  if (failures.length > 0) throw new Error(`${server.kind}: preflight failed: ${failures.join('; ')}`);
}

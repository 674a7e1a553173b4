import mqtt, { type IClientOptions, type IPublishPacket, type MqttClient, connectAsync } from 'mqtt';
import { MqttModule } from '#broker/protocols/mqtt';
import { startTestBroker, type TestBroker } from './test-broker.js';

const TIMEOUT_MS = 3000;

export const MQTT_ENDPOINT = { path: '/mqtt', subprotocols: ['mqtt', 'mqttv3.1'], defaultModule: 'mqtt' };

/** The real broker with the MQTT module, `/mqtt` open to anyone unless `endpoint` says otherwise. */
export function startMqttBroker(
  mqtt: Record<string, unknown> = {},
  endpoint: Record<string, unknown> = {},
  broker: Record<string, unknown> = {},
): Promise<TestBroker> {
  return startTestBroker(
    { ...broker, mqtt: { sysIntervalSec: 0, ...mqtt }, endpoints: [{ ...MQTT_ENDPOINT, ...endpoint }] },
    [MqttModule],
  );
}

/** MQTT.js options of a v5 client with a persistent session (clean start off, 300 s expiry) that does not reconnect. */
export function persistentSession(clientId: string): IClientOptions & { protocolVersion: 5 } {
  return {
    clientId,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT_MS,
    protocolVersion: 5,
    properties: { sessionExpiryInterval: 300 },
  };
}

/** What the CONNACK of `client` said of its session. */
export function sessionPresent(client: MqttClient): boolean | undefined {
  return (client as unknown as { connackPacket?: { sessionPresent: boolean } }).connackPacket?.sessionPresent;
}

/** An MQTT.js client over ws:// (to a test broker or a cluster node) that does not reconnect, so a refusal stays a refusal. */
export function connect(broker: { readonly url: string }, options: IClientOptions = {}): Promise<MqttClient> {
  return connectAsync(`${broker.url}/mqtt`, {
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT_MS,
    protocolVersion: 5,
    ...options,
  });
}

/** Connects with the inbox already listening, for messages that arrive right after CONNACK. */
export async function connectWithInbox(
  broker: { readonly url: string },
  options: IClientOptions = {},
): Promise<{ client: MqttClient; inbox: Inbox }> {
  const client = mqtt.connect(`${broker.url}/mqtt`, {
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT_MS,
    protocolVersion: 5,
    ...options,
  });
  const inbox = new Inbox(client);
  await Promise.race([
    nextEvent(client, 'connect'),
    nextEvent<[Error]>(client, 'error').then(([err]) => Promise.reject(err)),
  ]);
  return { client, inbox };
}

export interface Received {
  readonly topic: string;
  readonly payload: string;
  readonly packet: IPublishPacket;
}

/** Collects every message a client receives, with a timed wait for the next ones. */
export class Inbox {
  private readonly items: Received[] = [];
  private readonly waiters: (() => void)[] = [];

  constructor(client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      this.items.push({ topic, payload: payload.toString('utf8'), packet });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get received(): readonly Received[] {
    return this.items;
  }

  /** Resolves once `count` messages arrived in total. */
  async wait(count: number, timeoutMs = TIMEOUT_MS): Promise<readonly Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.items.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${count} messages, got ${this.items.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.items;
  }

  /** Resolves with the first message that `matches`, once one arrived (others may come before it). */
  async waitFor(matches: (message: Received) => boolean, timeoutMs = TIMEOUT_MS): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (let seen = 1; ; seen++) {
      const items = await this.wait(seen, deadline - Date.now());
      const found = items.find(matches);
      if (found !== undefined) return found;
      seen = items.length;
    }
  }
}

/** Resolves with what `emitter` emits next as `event`, or fails after the timeout. */
export function nextEvent<T extends unknown[]>(
  emitter: { once(event: string, listener: (...args: T) => void): unknown },
  event: string,
  timeoutMs = TIMEOUT_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${event}`)), timeoutMs);
    emitter.once(event, (...args: T) => {
      clearTimeout(timer);
      resolve(args);
    });
  });
}

/**
 * What a new subscriber on `broker` is given as the retained message of `topic` (null when none comes
 * within `waitMs`). Connects without retries: a connection closed before its CONNACK rejects.
 */
export async function readRetained(
  broker: { readonly url: string },
  topic: string,
  waitMs = TIMEOUT_MS,
): Promise<Buffer | null> {
  const client = await connectAsync(
    `${broker.url}/mqtt`,
    {
      clientId: `retained-reader-${Math.random().toString(36).slice(2)}`,
      protocolVersion: 5,
      reconnectPeriod: 0,
      connectTimeout: waitMs,
    },
    false,
  );
  try {
    return await new Promise<Buffer | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), waitMs);
      client.on('message', (received, payload, packet) => {
        if (received !== topic || !packet.retain) return;
        clearTimeout(timer);
        resolve(payload);
      });
      client.subscribeAsync(topic, { qos: 1 }).catch(() => resolve(null));
    });
  } finally {
    await client.endAsync(true);
  }
}

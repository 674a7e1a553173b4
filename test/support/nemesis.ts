import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { type BrokerNode, until } from './cluster.js';
import { connect } from './mqtt-helpers.js';

/** One message as a device saw it. */
export interface Seen {
  readonly n: number;
  readonly dup: boolean;
  readonly qos: number;
  /** Its packet id on the connection that brought it. */
  readonly packetId: number | undefined;
  /** performance.now() when it arrived. */
  readonly at: number;
}

/** One packet of the QoS 2 exchange (or a CONNACK) as the device saw it, for tracing a lost message. */
export interface Traced {
  readonly at: number;
  /** 'publish', 'pubrel' or 'connack'. */
  readonly cmd: string;
  readonly packetId: number | undefined;
  /** The message number of a PUBLISH; for a CONNACK, 1 when the session was present. */
  readonly n: number;
  readonly dup: boolean;
}

/** How many packets a device's trail keeps (the newest): a long run's losses are traced from them. */
const TRAIL_KEPT = 200_000;

/** A connection of the device, as the device saw it: from its CONNACK to its close. */
export interface Connected {
  readonly node: string;
  readonly from: number;
  to: number | null;
}

export interface DeviceOptions {
  readonly clientId: string;
  /** The nodes it connects to, in turn, one per (re)connect. */
  readonly nodes: () => readonly BrokerNode[];
  readonly filter: string;
  readonly qos: 1 | 2;
  readonly expirySec: number;
  readonly keepaliveSec: number;
  /** The will's topic (payload 'gone'), or none. */
  readonly willTopic?: string;
  /** How long it takes over each message before acknowledging it (a slow reader). */
  readonly readMs?: number;
  /** How long a CONNECT waits for its CONNACK before the device tries the next node (2000). */
  readonly connectTimeoutMs?: number;
  /** How long it waits before connecting again after a connection ended (200). */
  readonly reconnectMs?: number;
}

/**
 * A persistent subscriber that behaves like a real device: MQTT.js v5 with a session that outlives its
 * connections, reconnecting on its own (to the next node each time), resubscribing as MQTT.js does.
 * It records every message with its DUP flag, and each of its connections from CONNACK to close.
 */
export class Device {
  readonly seen: Seen[] = [];
  /** PUBLISH, PUBREL and CONNACK packets as they arrived, the newest `TRAIL_KEPT`. */
  readonly trail: Traced[] = [];
  readonly connections: Connected[] = [];
  readonly client: MqttClient;
  private turn = 0;
  private current: Connected | null = null;
  /** Whether a SUBACK came for its subscription; a SUBSCRIBE under way when it was not yet. */
  private subscription: 'none' | 'sent' | 'acked' = 'none';

  constructor(private readonly options: DeviceOptions) {
    const { nodes, readMs = 0 } = options;
    const first = nodes()[0] as BrokerNode;
    let node = first;
    const clientOptions: IClientOptions = {
      clientId: options.clientId,
      clean: false,
      protocolVersion: 5,
      keepalive: options.keepaliveSec,
      reconnectPeriod: options.reconnectMs ?? 200,
      // A refusal (0x88 while a dead node's sessions are not yet free) is a reason to try again, not to stop.
      reconnectOnConnackError: true,
      connectTimeout: options.connectTimeoutMs ?? 2000,
      properties: { sessionExpiryInterval: options.expirySec },
      ...(options.willTopic === undefined
        ? {}
        : { will: { topic: options.willTopic, payload: Buffer.from('gone'), qos: 1, retain: false } }),
      transformWsUrl: () => {
        const all = nodes();
        node = all[this.turn++ % all.length] as BrokerNode;
        return `${node.url}/mqtt`;
      },
    };
    this.client = mqtt.connect(`${first.url}/mqtt`, clientOptions);
    this.client.on('error', () => undefined);
    this.client.on('packetreceive', (packet) => {
      if (packet.cmd !== 'publish' && packet.cmd !== 'pubrel' && packet.cmd !== 'connack') return;
      this.trail.push({
        at: performance.now(),
        cmd: packet.cmd,
        packetId: packet.cmd === 'connack' ? undefined : packet.messageId,
        n:
          packet.cmd === 'publish'
            ? Number(packet.payload.toString())
            : packet.cmd === 'connack' && packet.sessionPresent
              ? 1
              : 0,
        dup: packet.cmd === 'publish' && packet.dup,
      });
      if (this.trail.length > TRAIL_KEPT) this.trail.splice(0, this.trail.length - TRAIL_KEPT);
    });
    this.client.on('connect', () => {
      this.current = { node: node.id, from: performance.now(), to: null };
      this.connections.push(this.current);
      // MQTT.js subscribes again on its own only for what it subscribed in this process; a SUBSCRIBE
      // that a lost connection failed is sent again on the next one.
      if (this.subscription === 'none') {
        this.subscription = 'sent';
        this.client.subscribeAsync(options.filter, { qos: options.qos }).then(
          () => (this.subscription = 'acked'),
          () => (this.subscription = this.subscription === 'sent' ? 'none' : this.subscription),
        );
      }
    });
    this.client.on('close', () => {
      if (this.current !== null) this.current.to = performance.now();
      this.current = null;
    });
    this.client.handleMessage = (packet, done) => {
      if (packet.cmd === 'publish') {
        this.seen.push({
          n: Number(packet.payload.toString()),
          dup: packet.dup,
          qos: packet.qos,
          packetId: packet.messageId,
          at: performance.now(),
        });
      }
      if (readMs === 0) done();
      else setTimeout(done, readMs);
    };
  }

  /**
   * How message `n` travelled: each PUBLISH of it, each PUBREL for its packet ids, and each CONNACK
   * between the first of them and the last (with whether the session was there), in order.
   */
  traceOf(n: number): string {
    const ids = new Set(this.trail.filter((t) => t.cmd === 'publish' && t.n === n).map((t) => t.packetId));
    const first = this.trail.findIndex((t) => t.cmd === 'publish' && t.n === n);
    if (first < 0) return 'never sent';
    const steps = this.trail
      .slice(first)
      .filter(
        (t) =>
          (t.cmd === 'publish' && t.n === n) ||
          (t.cmd === 'pubrel' && ids.has(t.packetId)) ||
          t.cmd === 'connack',
      );
    // The trail after the last step about the message says nothing of it.
    while (steps.at(-1)?.cmd === 'connack') steps.pop();
    return steps
      .map((t) => {
        const at = Math.round(t.at);
        if (t.cmd === 'connack') return `${at} CONNACK${t.n === 1 ? '' : ' (no session)'}`;
        return `${at} ${t.cmd.toUpperCase()} #${t.packetId}${t.dup ? ' DUP' : ''}`;
      })
      .join(', ');
  }

  /** Drops its network connection without DISCONNECT (a radio gone): it reconnects to the next node. */
  dropConnection(): void {
    (this.client as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  }

  /** Whether the device had a connection open at `at` (by its own view). */
  connectedAt(at: number): boolean {
    return this.connections.some((c) => c.from <= at && (c.to === null || c.to >= at));
  }

  /** Resolves once the first subscription is in place (the first SUBACK). */
  async subscribed(): Promise<void> {
    await until(`${this.options.clientId} got its SUBACK`, () => this.subscription === 'acked', 10_000).catch(
      (err: Error) => {
        throw new Error(`${err.message} (connections ${JSON.stringify(this.connections)})`);
      },
    );
  }

  async end(): Promise<void> {
    await this.client.endAsync(true);
  }
}

/** The longest a publish waits for its acknowledgement before it counts as not acknowledged. */
const PUBLISH_TIMEOUT_MS = 10_000;

/**
 * A publisher of numbered QoS 1/2 messages; `acked` are those its broker acknowledged (PUBACK/PUBCOMP),
 * with when (`ackedAt`); a refusal (a PUBACK with a failure code) or no answer is not an acknowledgement.
 */
export class Publisher {
  readonly acked: number[] = [];
  readonly ackedAt: number[] = [];
  refused = 0;
  /** The last number sent, acknowledged or not. */
  sent = 0;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  /** While paused: resolves on `resume`. */
  private paused: { until: Promise<void>; resume: () => void; idle: () => void } | null = null;

  private constructor(private readonly client: MqttClient) {}

  static async on(node: BrokerNode, clientId: string): Promise<Publisher> {
    return new Publisher(await connect(node, { clientId }));
  }

  /**
   * Publishes 1, 2, 3, ... to `topic`, one after the other, `gapMs` apart, until `stop`; `retain` keeps
   * each as the topic's retained message.
   */
  start(topic: string, qos: 1 | 2, gapMs: number, retain = false): void {
    this.running = (async () => {
      for (let n = 1; !this.stopped; n++) {
        if (this.paused !== null) {
          this.paused.idle();
          await this.paused.until;
        }
        this.sent = n;
        const answered = await Promise.race([
          this.client.publishAsync(topic, String(n), { qos, retain }).then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), PUBLISH_TIMEOUT_MS)),
        ]);
        if (answered) {
          this.acked.push(n);
          this.ackedAt.push(performance.now());
        } else this.refused++;
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
    })();
  }

  /** Publishes nothing more after the publish under way (resolves once it is answered), until `resume`. */
  async pause(): Promise<void> {
    let resume = (): void => undefined;
    let idle = (): void => undefined;
    const until = new Promise<void>((resolve) => (resume = resolve));
    const idled = new Promise<void>((resolve) => (idle = resolve));
    this.paused = { until, resume, idle };
    await idled;
  }

  resume(): void {
    this.paused?.resume();
    this.paused = null;
  }

  /**
   * Stops publishing and disconnects at once (a graceful end would wait forever for a publish the broker
   * never acknowledged); once, however often it is called.
   */
  async stop(): Promise<void> {
    if (this.stopped) return this.running;
    this.stopped = true;
    this.resume();
    await this.running;
    await this.client.endAsync(true);
  }
}

/** What a run did to the guarantees: acknowledged messages lost, repeats without DUP, QoS 2 repeats. */
export interface Verdict {
  readonly lost: number[];
  readonly repeatsWithoutDup: number[];
  readonly qos2Repeats: number[];
}

export function judge(acked: readonly number[], device: Device): Verdict {
  const copies = new Map<number, Seen[]>();
  for (const m of device.seen) copies.set(m.n, [...(copies.get(m.n) ?? []), m]);
  return {
    lost: acked.filter((n) => !copies.has(n)),
    repeatsWithoutDup: [...copies].filter(([, c]) => c.slice(1).some((m) => !m.dup)).map(([n]) => n),
    qos2Repeats: [...copies].filter(([, c]) => c.length > 1 && c[0]?.qos === 2).map(([n]) => n),
  };
}

/** Wills that reached `watcher` for `topic`, with when each arrived. */
export async function watchWills(
  node: BrokerNode,
  topic: string,
): Promise<{ at: number[]; end(): Promise<void> }> {
  const watcher = await connect(node, { clientId: `wills-${Math.random().toString(36).slice(2)}` });
  const at: number[] = [];
  watcher.on('message', (t) => {
    if (t === topic) at.push(performance.now());
  });
  await watcher.subscribeAsync(topic, { qos: 1 });
  return { at, end: () => watcher.endAsync(true) };
}

/**
 * The device subscribed, then a publisher on `node` sending 1, 2, 3, ... to `topic` every 10 ms, until
 * the device reads from the stream.
 */
export async function streamTo(
  device: Device,
  node: BrokerNode,
  clientId: string,
  topic: string,
  qos: 1 | 2,
): Promise<Publisher> {
  await device.subscribed();
  const publisher = await Publisher.on(node, clientId);
  publisher.start(topic, qos, 10);
  await until('the device reads from the stream', () => device.seen.length > 20, 10_000);
  return publisher;
}

/** However steadily a device receives, every acknowledged message must have reached it within this. */
const EVERY_ACKED_LIMIT_MS = 120_000;

/**
 * Waits until every message the publisher got acknowledged reached the device, for as long as the device
 * keeps receiving: a slow reader that hops nodes (its PINGRESP read late behind its window) takes each
 * hop's redeliveries again, which is slow, not lost. It fails once nothing arrived for `stallMs` (or past
 * `EVERY_ACKED_LIMIT_MS`); the failure says how many did not, which (the first 20), and `context()` (the
 * nodes' warnings, say).
 */
export async function everyAckedArrives(
  publisher: Publisher,
  device: Device,
  stallMs: number,
  context: () => string,
): Promise<Verdict> {
  const verdict = () => judge(publisher.acked, device);
  const limit = performance.now() + EVERY_ACKED_LIMIT_MS;
  let received = device.seen.length;
  let receivedAt = performance.now();
  while (verdict().lost.length > 0) {
    const now = performance.now();
    if (device.seen.length !== received) {
      received = device.seen.length;
      receivedAt = now;
    }
    if (now - receivedAt > stallMs || now > limit) {
      const { lost } = verdict();
      const why =
        now > limit ? `still missing after ${EVERY_ACKED_LIMIT_MS} ms` : `nothing arrived for ${stallMs} ms`;
      throw new Error(
        `${why}, every acknowledged message expected: ${lost.length} of ${publisher.acked.length} lost (${lost.slice(0, 20).join(' ')})\n${context()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return verdict();
}

/** Each copy of message `n` the device got: when (or its packet id), and DUP. */
export function copiesOf(device: Device, n: number, by: 'at' | 'packetId' = 'at'): string {
  return device.seen
    .filter((m) => m.n === n)
    .map((m) => `${by === 'at' ? Math.round(m.at) : `#${m.packetId}`}${m.dup ? ' DUP' : ''}`)
    .join(', ');
}

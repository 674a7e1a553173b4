import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type ClusterConfig } from '#broker/config';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV, type KvOptions } from '@nats-io/kv';
import {
  type Msg,
  type NatsConnection,
  RequestError,
  type Subscription,
  TimeoutError,
} from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { type Logger } from 'pino';
import { Membership } from './membership.js';
import { MAX_SUBJECT_BYTES, topicToSubject } from './subjects.js';

/** A request to another node got no answer in time (the node is busy, partitioned or just died). */
export class NodeTimeoutError extends Error {
  override readonly name = 'NodeTimeoutError';
}

/** Nobody serves the subject: the node is gone, or (for a keyed request) nobody holds the key. */
export class NoHolderError extends Error {
  override readonly name = 'NoHolderError';
}

/** The serving node answered with an error; `code` is the error's name there. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type RequestHandler = (body: unknown) => unknown;

type Reply = { ok: true; value: unknown } | { ok: false; code: string; message: string };

export interface ScatterResult<T> {
  /** Each answering node's value, by node id. */
  readonly answers: Map<string, T>;
  /** Live nodes that did not answer in time, or failed. */
  readonly missing: string[];
}

/** The default node id: host name and port, or the process id when the port is chosen by the system. */
export function defaultNodeId(port: number): string {
  const host = hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40);
  return port === 0 ? `${host}-pid${process.pid}` : `${host}-${port}`;
}

/**
 * This process as a member of the cluster: its NATS connection and the primitives the modules build on
 * (node-addressed requests, requests to whoever holds a key, change notices, KV buckets, membership).
 * Every subject starts with the cluster's name, so clusters sharing a NATS never meet.
 */
export class ClusterNode {
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly connectionListeners = new Set<(connected: boolean) => void>();
  /** The buckets this node uses, with their options, to make again if the server lost them. */
  private readonly buckets = new Map<string, Partial<KvOptions>>();
  /** Keyed handlers of this node, by subject. */
  private readonly keyed = new Map<string, RequestHandler>();
  private connected = true;

  readonly name: string;
  readonly membership: Membership;
  /** This process among the node's lifetimes: records written under the node id carry it. */
  readonly incarnation = randomUUID();

  private constructor(
    readonly nc: NatsConnection,
    /** A second connection, with echo, for queue subscriptions (the bus's `share`). */
    readonly queues: NatsConnection,
    readonly nodeId: string,
    readonly config: ClusterConfig,
    private readonly kvm: Kvm,
    nodes: KV,
    private readonly logger: Logger,
  ) {
    this.name = config.name;
    this.membership = new Membership(nodes, {
      nodeId,
      incarnation: this.incarnation,
      heartbeatMs: config.heartbeatMs,
      nodeTimeoutMs: config.nodeTimeoutMs,
      logger,
      connected: () => this.isConnected,
    });
  }

  /**
   * Connects and joins; rejects (and leaves nothing open) when NATS does not answer, so a node never
   * half-starts.
   */
  static async join(config: ClusterConfig, nodeId: string, logger: Logger): Promise<ClusterNode> {
    const servers = config.natsUrl ?? [];
    const options = {
      servers,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // A node cut off from NATS notices within about nodeTimeoutMs, as the others notice it.
      pingInterval: Math.min(10_000, Math.max(500, Math.floor(config.nodeTimeoutMs / 2))),
      maxPingOut: 2,
      timeout: config.requestTimeoutMs,
    };
    let nc: NatsConnection;
    let queues: NatsConnection;
    try {
      // A node never receives its own bus messages back: local delivery already happened in process.
      nc = await connect({ ...options, name: `${config.name}/${nodeId}`, noEcho: true });
    } catch (err) {
      throw new Error(`cannot reach NATS at ${servers.join(', ')}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      // Queue subscriptions hear this node's own messages too: NATS picks the member, this node's or not.
      queues = await connect({ ...options, name: `${config.name}/${nodeId}/queues` });
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw new Error(`cannot reach NATS at ${servers.join(', ')}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      const kvm = new Kvm(nc);
      // Heartbeats need no disk: in memory, a full file store (a stream that filled it) cannot stop them.
      const nodesOptions = {
        history: 1,
        ttl: config.nodeTimeoutMs * 4,
        replicas: config.replicas,
        storage: StorageType.Memory,
      };
      const nodes = await openBucket(kvm, `${config.name}-nodes`, nodesOptions);
      const node = new ClusterNode(
        nc,
        queues,
        nodeId,
        config,
        kvm,
        nodes,
        logger.child({ module: 'cluster', node: nodeId }),
      );
      node.buckets.set(`${config.name}-nodes`, nodesOptions);
      node.watchStatus();
      await node.membership.start();
      return node;
    } catch (err) {
      await nc.close().catch(() => undefined);
      await queues.close().catch(() => undefined);
      throw err;
    }
  }

  get isConnected(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  /** A subject under this cluster's name. */
  subject(...tokens: string[]): string {
    return [this.name, ...tokens].join('.');
  }

  /** A KV bucket of this cluster (created when missing). */
  bucket(suffix: string, options: Partial<KvOptions> = {}): Promise<KV> {
    const name = `${this.name}-${suffix}`;
    const withReplicas = { replicas: this.config.replicas, ...options };
    this.buckets.set(name, withReplicas);
    return openBucket(this.kvm, name, withReplicas);
  }

  /**
   * After a reconnect: a NATS server that came back without its JetStream state (a new machine, a wiped
   * disk) has none of the buckets; each is created again (creating one that exists changes nothing).
   */
  private recreateBuckets(): void {
    for (const [name, options] of this.buckets) {
      this.kvm.create(name, options).catch(() => undefined);
    }
  }

  /** Answers requests addressed to this node for `service`. */
  serve(service: string, handler: RequestHandler): Subscription {
    this.handlers.set(service, handler);
    return this.respond(this.subject('node', this.nodeId, service), handler);
  }

  /**
   * Answers requests for `key` of `service` while this node holds it (one charge point's socket, say).
   * Throws RangeError for a key too long for a subject.
   */
  serveKey(service: string, key: string, handler: RequestHandler): { unsubscribe(): void } {
    const subject = this.keySubject(service, key);
    if (subject === null) throw new RangeError(`a key of ${service} is too long to serve across the cluster`);
    // No echo: a request of this node's own for a key it serves never comes back from NATS.
    this.keyed.set(subject, handler);
    const subscription = this.respond(subject, handler);
    return {
      unsubscribe: () => {
        if (this.keyed.get(subject) === handler) this.keyed.delete(subject);
        subscription.unsubscribe();
      },
    };
  }

  /** A request to one node; this node's own requests run the local handler without a round trip. */
  async request<T>(node: string, service: string, body: unknown, timeoutMs?: number): Promise<T> {
    if (node === this.nodeId) {
      const handler = this.handlers.get(service);
      if (handler === undefined) throw new NoHolderError(`this node does not serve ${service}`);
      return this.runLocal<T>(handler, body);
    }
    return this.ask<T>(this.subject('node', node, service), body, timeoutMs);
  }

  /** A request to whichever node holds `key`; NoHolderError when none does. */
  async requestKey<T>(service: string, key: string, body: unknown, timeoutMs?: number): Promise<T> {
    const subject = this.keySubject(service, key);
    if (subject === null) throw new NoHolderError(`a key of ${service} is too long to be held`);
    const local = this.keyed.get(subject);
    if (local !== undefined) return this.runLocal<T>(local, body);
    return this.ask<T>(subject, body, timeoutMs);
  }

  private keySubject(service: string, key: string): string | null {
    const subject = this.subject('key', service, topicToSubject(key));
    return Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES ? subject : null;
  }

  /** A handler of this node's, its failure shaped as a remote one's. */
  private async runLocal<T>(handler: RequestHandler, body: unknown): Promise<T> {
    try {
      return (await handler(body)) as T;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      throw new RemoteError(error.name, error.message);
    }
  }

  /** The same request to every live node, this one included, each within the time limit. */
  async scatter<T>(service: string, body: unknown, timeoutMs?: number): Promise<ScatterResult<T>> {
    const nodes = this.membership.live();
    const settled = await Promise.allSettled(
      nodes.map((node) => this.request<T>(node, service, body, timeoutMs)),
    );
    const answers = new Map<string, T>();
    const missing: string[] = [];
    settled.forEach((outcome, i) => {
      const node = nodes[i] as string;
      if (outcome.status === 'fulfilled') answers.set(node, outcome.value);
      else missing.push(node);
    });
    return { answers, missing };
  }

  /**
   * A one-way message to one node's `service` (no answer, no delivery guarantee: a protocol that needs
   * one watches membership, as a node that is gone never answers).
   */
  post(node: string, service: string, body: unknown): boolean {
    if (!this.isConnected) return false;
    try {
      this.nc.publish(this.subject('node', node, service), JSON.stringify(body));
      return true;
    } catch (err) {
      // Past the server's payload limit, or closing: the caller answers for the lost message.
      this.logger.debug({ err: (err as Error).message, node, service }, 'cluster message not sent');
      return false;
    }
  }

  /** Receives the one-way messages posted to this node's `service`. */
  listen(service: string, handler: (body: unknown) => void): Subscription {
    return this.onSubject(this.subject('node', this.nodeId, service), handler);
  }

  /** Tells the other nodes that something changed (fire and forget; they also poll as a backstop). */
  notify(topic: string, body: unknown = {}): void {
    if (!this.isConnected) return;
    this.nc.publish(this.subject('notice', topic), JSON.stringify(body));
  }

  onNotice(topic: string, handler: (body: unknown) => void): Subscription {
    return this.onSubject(this.subject('notice', topic), handler);
  }

  private onSubject(subject: string, handler: (body: unknown) => void): Subscription {
    return this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        const body = parseJson(msg.data);
        if (body === undefined) {
          this.logger.warn({ subject: msg.subject }, 'cluster message that is not JSON dropped');
          return;
        }
        try {
          handler(body);
        } catch (error) {
          this.logger.error({ err: (error as Error).message, subject }, 'cluster message handler failed');
        }
      },
    });
  }

  /** Called when the NATS connection goes (false) and comes back (true); returns the unsubscribe. */
  onConnection(listener: (connected: boolean) => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  private emitConnection(connected: boolean): void {
    for (const listener of this.connectionListeners) {
      try {
        listener(connected);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'cluster connection listener failed');
      }
    }
  }

  /** Leaves the cluster: deletes the heartbeat, then drains (pending replies go out) and closes. */
  async leave(): Promise<void> {
    await this.membership.stop();
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
    if (!this.queues.isClosed()) await this.queues.drain().catch(() => this.queues.close());
  }

  private respond(subject: string, handler: RequestHandler): Subscription {
    return this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err === null) void this.answer(msg, handler);
      },
    });
  }

  private async answer(msg: Msg, handler: RequestHandler): Promise<void> {
    let reply: Reply;
    const body = parseJson(msg.data);
    if (body === undefined) {
      this.logger.warn({ subject: msg.subject }, 'cluster request that is not JSON dropped');
      reply = { ok: false, code: 'BadRequest', message: 'the request is not JSON' };
    } else {
      try {
        reply = { ok: true, value: await handler(body) };
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        reply = { ok: false, code: error.name, message: error.message };
      }
    }
    if (msg.reply === undefined || msg.reply === '' || this.nc.isClosed()) return;
    try {
      msg.respond(JSON.stringify(reply));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, subject: msg.subject }, 'cluster reply not sent');
    }
  }

  private async ask<T>(subject: string, body: unknown, timeoutMs?: number): Promise<T> {
    let msg: Msg;
    try {
      msg = await this.nc.request(subject, JSON.stringify(body), {
        timeout: timeoutMs ?? this.config.requestTimeoutMs,
      });
    } catch (err) {
      if (err instanceof RequestError && err.isNoResponders())
        throw new NoHolderError(`nobody serves ${subject}`);
      if (err instanceof TimeoutError || (err as Error).cause instanceof TimeoutError) {
        throw new NodeTimeoutError(`no answer from ${subject} in time`);
      }
      throw err;
    }
    const reply = parseJson(msg.data) as Reply | undefined;
    if (reply === undefined || typeof reply !== 'object' || reply === null || typeof reply.ok !== 'boolean') {
      throw new RemoteError('BadReply', `the answer from ${subject} is not a reply`);
    }
    if (!reply.ok) throw new RemoteError(String(reply.code), String(reply.message));
    return reply.value as T;
  }

  private watchStatus(): void {
    void (async () => {
      for await (const status of this.nc.status()) {
        if (status.type === 'disconnect' && this.connected) {
          this.connected = false;
          this.logger.error('NATS connection lost: new connections get 503 until it is back');
          this.emitConnection(false);
        } else if (status.type === 'reconnect' && !this.connected) {
          this.connected = true;
          this.logger.info('NATS connection restored');
          this.recreateBuckets();
          this.membership.reconnected();
          this.emitConnection(true);
        }
      }
    })();
  }
}

async function openBucket(kvm: Kvm, name: string, options: Partial<KvOptions>): Promise<KV> {
  try {
    return await kvm.create(name, options);
  } catch (err) {
    // Created earlier with other limits (by another version of a node): use it as it is. If it is not
    // there either, the reason it could not be created is the one worth reading.
    try {
      return await kvm.open(name);
    } catch {
      throw new Error(`JetStream bucket ${name} cannot be created: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}

const utf8 = new TextDecoder();

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(data)) as unknown;
  } catch {
    return undefined;
  }
}

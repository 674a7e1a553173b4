import { randomUUID } from 'node:crypto';
import { type ClusterConfig } from '#broker/config';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV, type KvOptions } from '@nats-io/kv';
import { type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { NoHolderError } from './cluster-errors.js';
import { answer, ask, parseJson, type RequestHandler, runLocal } from './cluster-requests.js';
import { ConnectionStatus, type NatsState } from './connection-status.js';
import { Membership } from './membership.js';
import { connectNode } from './nats-connect.js';
import { NATS_SERVER_KEEPS_ACKS, NATS_SERVER_NOT_MEASURED, olderThan } from './nats-version.js';
import { openBucket } from './open-bucket.js';
import { MAX_SUBJECT_BYTES, topicToSubject } from './subjects.js';

/** The node-addressed request a node answers to show it reaches the others over NATS. */
const PING = 'membership.ping';

/** A node's NATS connection as its client knows it (never a credential). */
export interface NatsStatus {
  readonly state: NatsState;
  /** The server it is (or was last) connected to: its version, as the server said, and host:port. */
  readonly server: { readonly version: string | null; readonly address: string | null };
  /** Milliseconds since it last connected or reconnected. */
  readonly connectedAgoMs: number;
  /** Whether its own heartbeat was written lately (false: it acts under no lease meanwhile). */
  readonly heartbeatConfirmed: boolean;
}

export interface ScatterResult<T> {
  /** Each answering node's value, by node id. */
  readonly answers: Map<string, T>;
  /** Live nodes that did not answer in time, or failed. */
  readonly missing: string[];
}

/**
 * This process as a member of the cluster: its NATS connection and the primitives the modules build on
 * (node-addressed requests, requests to whoever holds a key, change notices, KV buckets, membership).
 * Every subject starts with the cluster's name, so clusters sharing a NATS never meet.
 */
export class ClusterNode {
  private readonly handlers = new Map<string, RequestHandler>();
  /** The buckets this node uses, with their options, to make again if the server lost them. */
  private readonly buckets = new Map<string, Partial<KvOptions>>();
  /** Keyed handlers of this node, by subject. */
  private readonly keyed = new Map<string, RequestHandler>();
  private readonly status: ConnectionStatus;

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
    this.status = new ConnectionStatus(logger);
    this.membership = new Membership(nodes, {
      nodeId,
      incarnation: this.incarnation,
      heartbeatMs: config.heartbeatMs,
      nodeTimeoutMs: config.nodeTimeoutMs,
      logger,
      connected: () => this.isConnected,
      reachesAny: (nodes) => this.reachesAny(nodes),
    });
  }

  /** Whether one of `nodes` answers a ping within a heartbeat. */
  private async reachesAny(nodes: readonly string[]): Promise<boolean> {
    const pings = nodes.map((node) =>
      this.request(node, PING, null, this.config.heartbeatMs).then(() => true),
    );
    return Promise.any(pings).catch(() => false);
  }

  /**
   * Connects and joins; rejects (and leaves nothing open) when NATS does not answer, so a node never
   * half-starts.
   */
  static async join(config: ClusterConfig, nodeId: string, logger: Logger): Promise<ClusterNode> {
    const { nc, queues } = await connectNode(config, nodeId);
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
      const version = nc.info?.version ?? '';
      if (olderThan(version, NATS_SERVER_KEEPS_ACKS))
        node.logger.warn(
          { natsServer: version, keepsAcknowledgements: `${NATS_SERVER_KEEPS_ACKS} and later` },
          'cluster: this nats-server may lose or repeat acknowledged stream messages when it restarts (docs/cluster.md)',
        );
      else if (!olderThan(version, NATS_SERVER_NOT_MEASURED))
        node.logger.warn(
          { natsServer: version, measuredOn: `${NATS_SERVER_KEEPS_ACKS} up to ${NATS_SERVER_NOT_MEASURED}` },
          'cluster: the guarantees under faults were measured on nats-server 2.10 only; on 2.15.1 a long run repeated QoS 2 messages (docs/cluster.md)',
        );
      node.watchStatus();
      node.serve(PING, () => true);
      await node.membership.start();
      return node;
    } catch (err) {
      await nc.close().catch(() => undefined);
      await queues.close().catch(() => undefined);
      throw err;
    }
  }

  get isConnected(): boolean {
    return this.status.connected && !this.nc.isClosed();
  }

  /** The NATS connection's state and server, for the dashboard's nodes table. */
  natsStatus(): NatsStatus {
    return {
      state: this.nc.isClosed() ? 'disconnected' : this.status.state,
      // The URL's host part: what was configured minus any user and password.
      server: { version: this.nc.info?.version ?? null, address: this.nc.getServer() || null },
      connectedAgoMs: this.status.connectedAgoMs(),
      heartbeatConfirmed: this.membership.beatConfirmed(),
    };
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
      return runLocal<T>(handler, body);
    }
    return this.ask<T>(this.subject('node', node, service), body, timeoutMs);
  }

  /** A request to whichever node holds `key`; NoHolderError when none does. */
  async requestKey<T>(service: string, key: string, body: unknown, timeoutMs?: number): Promise<T> {
    const subject = this.keySubject(service, key);
    if (subject === null) throw new NoHolderError(`a key of ${service} is too long to be held`);
    const local = this.keyed.get(subject);
    if (local !== undefined) return runLocal<T>(local, body);
    return this.ask<T>(subject, body, timeoutMs);
  }

  private keySubject(service: string, key: string): string | null {
    const subject = this.subject('key', service, topicToSubject(key));
    return Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES ? subject : null;
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
    return this.status.onConnection(listener);
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
        if (err === null) void answer(this.nc, this.logger, msg, handler);
      },
    });
  }

  private ask<T>(subject: string, body: unknown, timeoutMs?: number): Promise<T> {
    return ask<T>(this.nc, subject, body, timeoutMs ?? this.config.requestTimeoutMs);
  }

  private watchStatus(): void {
    this.status.watch(
      this.nc,
      () => this.membership.disconnected(),
      () => {
        this.recreateBuckets();
        this.membership.reconnected();
      },
    );
  }
}

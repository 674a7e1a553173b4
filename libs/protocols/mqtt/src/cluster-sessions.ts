import { type ClusterNode } from '#broker/cluster';
import { type TimerHandle } from '#broker/gateway';
import { type KV } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type MqttBroker } from './broker.js';
import { decodeMessage, encodeMessage } from './message-codec.js';
import { type Session } from './session.js';
import {
  type Claim,
  type SessionDirectory,
  type SessionState,
  type WillRecord,
} from './session-directory.js';
import { type Subscription } from './subscription.js';

/** The node-addressed request that asks the node holding a client id to let go. */
const TAKEOVER = 'mqtt.takeover';
/** A client id longer than this in base64url is not a KV key: such a session stays on its node. */
const MAX_KEY_LENGTH = 2048;

/** A session's record in the bucket: who holds it, and what another node needs to carry it on. */
interface SessionRecord {
  readonly node: string;
  readonly expirySec: number;
  readonly subscriptions: readonly Subscription[];
  readonly will: EncodedWill | null;
}

interface EncodedWill {
  /** The message (message-codec), base64. */
  readonly message: string;
  readonly delaySec: number;
  readonly expirySec: number | null;
  readonly principal: string | null;
}

interface TakeoverRequest {
  readonly clientId: string;
  readonly clean: boolean;
}

/** A dead node's session this node adopted: its will and expiry run here until its client is back. */
interface Orphan {
  readonly record: SessionRecord;
  revision: number;
  willTimer: TimerHandle | null;
  expiryTimer: TimerHandle | null;
}

function keyOf(clientId: string): string | null {
  const key = Buffer.from(clientId, 'utf8').toString('base64url');
  return key.length <= MAX_KEY_LENGTH ? key : null;
}

function encodeWill(will: WillRecord | null): EncodedWill | null {
  if (will === null) return null;
  return {
    message: encodeMessage(will.message).toString('base64'),
    delaySec: will.delaySec,
    expirySec: will.expirySec,
    principal: will.principal,
  };
}

function decodeWill(will: EncodedWill | null): WillRecord | null {
  if (will === null || typeof will?.message !== 'string') return null;
  const message = decodeMessage(Buffer.from(will.message, 'base64'));
  if (message === null) return null;
  return {
    message,
    delaySec: Number(will.delaySec) || 0,
    expirySec: will.expirySec ?? null,
    principal: will.principal ?? null,
  };
}

function parseRecord(value: Uint8Array): SessionRecord | null {
  try {
    const record = JSON.parse(Buffer.from(value).toString('utf8')) as SessionRecord;
    if (typeof record?.node !== 'string' || !Array.isArray(record.subscriptions)) return null;
    return record;
  } catch {
    return null;
  }
}

function stateOf(record: SessionRecord): SessionState {
  return { expirySec: record.expirySec, subscriptions: record.subscriptions };
}

/**
 * MQTT sessions across the nodes: one record per client id in a KV bucket, written with the revision
 * it was read at (compare-and-swap), as nats-server's MQTT support keeps its sessions. A CONNECT on this
 * node asks the node holding the id to let go (DISCONNECT 0x8E there) and takes the record over; of
 * two CONNECTs racing on two nodes, the one whose write lands first keeps the id and the other is
 * refused (0x89), so exactly one stays. The record carries the subscriptions of a persistent session
 * (it resumes on any node) and the connection's will. When a node dies, the survivors race for each of
 * its records (CAS again: one wins); the winner publishes its will after the will's delay, once, and
 * ends it at its expiry, unless its client comes back first.
 *
 * Not yet across nodes: QoS 1/2 messages queued for a disconnected session stay on the node that
 * queued them (lost with it); a JetStream stream will carry them.
 */
export class ClusterSessions implements SessionDirectory {
  private sessions: KV | null = null;
  /** `<node>.<key>` for each record a node holds, so the survivors find a dead node's records. */
  private index: KV | null = null;
  /** The revision of each record this node wrote last. */
  private readonly revisions = new Map<string, number>();
  private readonly orphans = new Map<string, Orphan>();
  /** Client ids being handed to another node: their session ends here without deleting the record. */
  private readonly handingOver = new Set<string>();
  private readonly dirty = new Set<Session>();
  private flushScheduled = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.sessions = await this.node.bucket('mqtt-sessions', { history: 1 });
    this.index = await this.node.bucket('mqtt-session-nodes', { history: 1 });
    this.broker.directory = this;
    this.node.serve(TAKEOVER, (body) => this.takeover(body as TakeoverRequest));
    this.node.membership.onChange((change) => {
      if (!change.up) void this.adoptFrom(change.node);
    });
  }

  /** Shutdown: no orphan's timer fires any more (the others adopt them when this node has left). */
  stop(): void {
    for (const orphan of this.orphans.values()) this.cancel(orphan);
    this.orphans.clear();
    this.broker.directory = null;
  }

  async claim(clientId: string, clean: boolean, expirySec: number, will: WillRecord | null): Promise<Claim> {
    const kv = this.sessions;
    const key = keyOf(clientId);
    if (kv === null || key === null) return { state: null };
    const entry = await kv.get(key);
    const held = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
    let state: SessionState | null = null;
    if (held !== null && held.node !== this.node.nodeId && this.node.membership.isLive(held.node)) {
      try {
        state = await this.node.request<SessionState | null>(held.node, TAKEOVER, {
          clientId,
          clean,
        } satisfies TakeoverRequest);
      } catch (err) {
        // It did not let go in time: the record decides, and the node will find it lost the id.
        this.log.warn(
          { clientId, node: held.node, err: (err as Error).message },
          'mqtt: takeover not answered',
        );
        state = clean ? null : stateOf(held);
      }
    } else if (held !== null) {
      // A dead node's record nobody adopted yet, or an orphan adopted here: the client is back.
      const orphan = this.orphans.get(clientId);
      if (orphan !== undefined) this.release(clientId, orphan, clean);
      state = clean ? null : stateOf(held);
    }
    const record: SessionRecord = {
      node: this.node.nodeId,
      expirySec,
      subscriptions: state?.subscriptions ?? [],
      will: encodeWill(will),
    };
    try {
      const value = JSON.stringify(record);
      const revision =
        entry !== null && entry.operation === 'PUT'
          ? await kv.update(key, value, entry.revision)
          : await kv.create(key, value);
      this.revisions.set(clientId, revision);
    } catch {
      return 'lost';
    }
    if (held !== null && held.node !== this.node.nodeId) this.unindex(held.node, key);
    this.index?.put(`${this.node.nodeId}.${key}`, '').catch(() => undefined);
    return { state };
  }

  changed(session: Session): void {
    if (!this.revisions.has(session.clientId)) return;
    this.dirty.add(session);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One write per session per turn, however many SUBSCRIBEs that turn handled.
    setImmediate(() => this.flush());
  }

  ended(session: Session): void {
    this.dirty.delete(session);
    const clientId = session.clientId;
    if (this.handingOver.has(clientId)) return;
    // A takeover on this node ends the old session and attaches the new one in the same turn: the
    // record, which the new connection claimed, stays then.
    setImmediate(() => {
      if (this.broker.sessions.has(clientId)) return;
      const revision = this.revisions.get(clientId);
      const key = keyOf(clientId);
      this.revisions.delete(clientId);
      if (revision === undefined || key === null) return;
      this.sessions?.delete(key, { previousSeq: revision }).catch(() => undefined);
      this.unindex(this.node.nodeId, key);
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const sessions = [...this.dirty];
    this.dirty.clear();
    for (const session of sessions) void this.write(session);
  }

  private async write(session: Session): Promise<void> {
    const kv = this.sessions;
    const key = keyOf(session.clientId);
    const revision = this.revisions.get(session.clientId);
    if (kv === null || key === null || revision === undefined) return;
    const record: SessionRecord = {
      node: this.node.nodeId,
      expirySec: session.expirySec,
      subscriptions: [...session.subscriptions.values()],
      will: encodeWill(session.will),
    };
    try {
      this.revisions.set(session.clientId, await kv.update(key, JSON.stringify(record), revision));
    } catch (err) {
      // Another node took the id meanwhile (its CONNECT wins), or the bucket is away: logged, not fatal.
      this.log.debug(
        { clientId: session.clientId, err: (err as Error).message },
        'mqtt: session record not updated',
      );
    }
  }

  /** On the node holding `clientId`: let go of it for the node asking. */
  private takeover(request: TakeoverRequest): SessionState | null {
    const clientId = String(request?.clientId);
    const clean = request?.clean === true;
    const orphan = this.orphans.get(clientId);
    if (orphan !== undefined) {
      this.release(clientId, orphan, clean);
      return clean ? null : stateOf(orphan.record);
    }
    this.handingOver.add(clientId);
    try {
      return this.broker.lifecycle.handOver(clientId, clean);
    } finally {
      this.handingOver.delete(clientId);
      this.revisions.delete(clientId);
    }
  }

  /** The node `dead` left: race the other survivors for each of its records; each won one is adopted. */
  private async adoptFrom(dead: string): Promise<void> {
    const index = this.index;
    const kv = this.sessions;
    if (index === null || kv === null) return;
    const keys: string[] = [];
    try {
      for await (const entry of await index.keys(`${dead}.>`)) keys.push(entry.slice(dead.length + 1));
    } catch (err) {
      this.log.warn({ node: dead, err: (err as Error).message }, 'mqtt: sessions of a dead node not listed');
      return;
    }
    for (const key of keys) {
      try {
        const entry = await kv.get(key);
        const record = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
        if (entry === null || record === null || record.node !== dead) continue;
        const adopted: SessionRecord = { ...record, node: this.node.nodeId };
        const revision = await kv.update(key, JSON.stringify(adopted), entry.revision);
        this.unindex(dead, key);
        await this.index?.put(`${this.node.nodeId}.${key}`, '');
        this.adopt(Buffer.from(key, 'base64url').toString('utf8'), adopted, revision);
      } catch {
        // Another survivor won this one, or its client reconnected first.
      }
    }
  }

  private adopt(clientId: string, record: SessionRecord, revision: number): void {
    const orphan: Orphan = { record, revision, willTimer: null, expiryTimer: null };
    this.orphans.set(clientId, orphan);
    this.log.info({ clientId }, 'mqtt: adopted the session of a dead node');
    const { clock } = this.broker;
    const will = decodeWill(record.will);
    if (will !== null) {
      const delay = Math.min(will.delaySec, record.expirySec);
      const publish = (): void => {
        orphan.willTimer = null;
        this.publishWill(will);
      };
      if (delay === 0) publish();
      else orphan.willTimer = clock.after(delay * 1000, publish);
    }
    if (record.expirySec === 0) return this.expire(clientId, orphan);
    orphan.expiryTimer = clock.after(record.expirySec * 1000, () => this.expire(clientId, orphan));
  }

  /** An orphan's expiry: a will still waiting goes out, the record goes. */
  private expire(clientId: string, orphan: Orphan): void {
    if (orphan.willTimer !== null) {
      const will = decodeWill(orphan.record.will);
      if (will !== null) this.publishWill(will);
    }
    this.cancel(orphan);
    this.orphans.delete(clientId);
    const key = keyOf(clientId);
    if (key === null) return;
    this.sessions?.delete(key, { previousSeq: orphan.revision }).catch(() => undefined);
    this.unindex(this.node.nodeId, key);
  }

  /** The orphan's client is back (here or elsewhere): on a clean start its waiting will goes out now. */
  private release(clientId: string, orphan: Orphan, clean: boolean): void {
    if (clean && orphan.willTimer !== null) {
      const will = decodeWill(orphan.record.will);
      if (will !== null) this.publishWill(will);
    }
    this.cancel(orphan);
    this.orphans.delete(clientId);
  }

  private cancel(orphan: Orphan): void {
    const { clock } = this.broker;
    if (orphan.willTimer !== null) clock.cancel(orphan.willTimer);
    if (orphan.expiryTimer !== null) clock.cancel(orphan.expiryTimer);
    orphan.willTimer = null;
    orphan.expiryTimer = null;
  }

  private publishWill(will: WillRecord): void {
    const message =
      will.expirySec === null
        ? will.message
        : { ...will.message, expiresAt: this.broker.clock.now() + will.expirySec * 1000 };
    this.broker.publish(message, { principal: will.principal, bridge: true });
  }

  private unindex(node: string, key: string): void {
    this.index?.delete(`${node}.${key}`).catch(() => undefined);
  }
}

import { randomUUID } from 'node:crypto';
import { type ClusterNode, NoHolderError, NodeTimeoutError } from '#broker/cluster';
import { type TimerHandle } from '#broker/gateway';
import { type KV, type KvEntry } from '@nats-io/kv';
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
import { parseFilter } from './topic-filter.js';

/** The node-addressed request that asks the node holding a client id to let go. */
const TAKEOVER = 'mqtt.takeover';
/** A client id longer than this in base64url is not a KV key: such a session stays on its node. */
const MAX_KEY_LENGTH = 2048;
/** A record past this (a huge will, mostly) is written without its will: NATS refuses payloads past 1 MiB. */
const MAX_RECORD_BYTES = 512 * 1024;
/** How often a claim reads again after its compare-and-swap met a write of the node letting go. */
const CLAIM_ATTEMPTS = 3;

/** A session's record in the bucket: who holds it, and what another node needs to carry it on. */
interface SessionRecord {
  readonly node: string;
  /** The process of that node that wrote it: a record of an earlier process under the id is an orphan. */
  readonly incarnation: string;
  /** Set by the CONNECT that claimed the id; later writes of that connection keep it. */
  readonly claim: string;
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
  const delaySec = Number(will.delaySec);
  return {
    message,
    delaySec: Number.isInteger(delaySec) && delaySec >= 0 ? delaySec : 0,
    expirySec: typeof will.expirySec === 'number' ? will.expirySec : null,
    principal: typeof will.principal === 'string' ? will.principal : null,
  };
}

/** A subscription from NATS, checked as a SUBSCRIBE would be; null for anything else. */
function subscriptionOf(raw: unknown): Subscription | null {
  const s = raw as Subscription;
  if (typeof s?.raw !== 'string' || ![0, 1, 2].includes(s.qos)) return null;
  let parsed;
  try {
    parsed = parseFilter(s.raw);
  } catch {
    return null;
  }
  const retainHandling = [0, 1, 2].includes(s.retainHandling) ? s.retainHandling : 0;
  const id = s.subscriptionId;
  return {
    raw: s.raw,
    filter: parsed.filter,
    group: parsed.group,
    qos: s.qos,
    noLocal: s.noLocal === true,
    retainAsPublished: s.retainAsPublished === true,
    retainHandling,
    subscriptionId: Number.isInteger(id) && (id as number) > 0 && (id as number) < 268_435_456 ? id : null,
  };
}

function parseRecord(value: Uint8Array): SessionRecord | null {
  try {
    const record = JSON.parse(Buffer.from(value).toString('utf8')) as SessionRecord;
    if (typeof record?.node !== 'string' || !Array.isArray(record.subscriptions)) return null;
    const expirySec = Number(record.expirySec);
    return {
      node: record.node,
      incarnation: typeof record.incarnation === 'string' ? record.incarnation : '',
      claim: typeof record.claim === 'string' ? record.claim : '',
      expirySec: Number.isInteger(expirySec) && expirySec >= 0 ? expirySec : 0,
      subscriptions: record.subscriptions.map(subscriptionOf).filter((s): s is Subscription => s !== null),
      will: record.will ?? null,
    };
  } catch {
    return null;
  }
}

/** What letting go yields: the session's state, and a will that is due once the claim wins. */
interface Released {
  readonly state: SessionState | null;
  readonly will: WillRecord | null;
}

function stateOf(record: SessionRecord): SessionState {
  return { expirySec: record.expirySec, subscriptions: record.subscriptions };
}

/** JetStream's "wrong last sequence": someone else wrote the record since it was read. */
function isConflict(err: unknown): boolean {
  return (err as { code?: number }).code === 10071 || /wrong last sequence/i.test((err as Error).message);
}

/**
 * MQTT sessions across the nodes: one record per client id in a KV bucket, written with the revision
 * it was read at (compare-and-swap), as nats-server's MQTT support keeps its sessions. A CONNECT on this
 * node asks the node holding the id to let go (DISCONNECT 0x8E there) and takes the record over; of
 * CONNECTs racing on several nodes, the one whose write lands first keeps the id and the others are
 * refused (0x89), so exactly one stays. The record carries the subscriptions of a persistent session
 * (it resumes on any node) and the connection's will. When a node dies (or restarts under its id), the
 * survivors race for each of its records (CAS again: one wins); the winner publishes its will after
 * the will's delay, once, and ends it at its expiry, unless its client comes back first. A node that
 * finds its record taken by another node lets its own connection go (0x8E).
 *
 * Every write of one client id's record goes through one queue, in order, each with the revision the
 * previous one left. Not yet across nodes: QoS 1/2 messages queued for a disconnected session stay on
 * the node that queued them (lost with it); a JetStream stream will carry them.
 */
export class ClusterSessions implements SessionDirectory {
  private sessions: KV | null = null;
  /** `<node>.<key>` for each record a node holds, so the survivors find a dead node's records. */
  private index: KV | null = null;
  /** The revision of each record this node wrote last. */
  private readonly revisions = new Map<string, number>();
  /** The claim nonce of each record this node holds. */
  private readonly claims = new Map<string, string>();
  /** Claims under way here: a takeover by another node meanwhile makes them lose. */
  private readonly claiming = new Map<string, { superseded: boolean }>();
  private offMembership: (() => void) | null = null;
  private stopped = false;
  private readonly orphans = new Map<string, Orphan>();
  /** Client ids being handed to another node: their session ends here without deleting the record. */
  private readonly handingOver = new Set<string>();
  /** Per client id, the tail of its record writes. */
  private readonly queues = new Map<string, Promise<void>>();
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
    this.offMembership = this.node.membership.onChange((change) => {
      if (!change.up) void this.adoptFrom(change.node);
    });
  }

  /** Shutdown: no orphan's timer fires any more (the others adopt them when this node has left). */
  stop(): void {
    this.stopped = true;
    this.offMembership?.();
    for (const orphan of this.orphans.values()) this.cancel(orphan);
    this.orphans.clear();
    this.broker.directory = null;
  }

  async claim(clientId: string, clean: boolean, expirySec: number, will: WillRecord | null): Promise<Claim> {
    const kv = this.sessions;
    const key = keyOf(clientId);
    if (kv === null || key === null) return { state: null };
    const nonce = randomUUID();
    const pending = { superseded: false };
    this.claiming.set(clientId, pending);
    try {
      return await this.claimAs(kv, key, clientId, nonce, pending, clean, expirySec, will);
    } finally {
      if (this.claiming.get(clientId) === pending) this.claiming.delete(clientId);
    }
  }

  private async claimAs(
    kv: KV,
    key: string,
    clientId: string,
    nonce: string,
    pending: { superseded: boolean },
    clean: boolean,
    expirySec: number,
    will: WillRecord | null,
  ): Promise<Claim> {
    let released: Released | null = null;
    for (let attempt = 1; ; attempt++) {
      let entry: KvEntry | null;
      try {
        entry = await kv.get(key);
      } catch {
        return 'unavailable';
      }
      const held = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
      if (held !== null && released === null) {
        const outcome = await this.letGo(clientId, clean, held);
        if (outcome === 'unavailable') return 'unavailable';
        released = outcome;
      }
      const state = released?.state ?? null;
      const record = this.recordOf(nonce, expirySec, state?.subscriptions ?? [], will);
      try {
        const revision =
          entry !== null && entry.operation === 'PUT'
            ? await kv.update(key, record, entry.revision)
            : await kv.create(key, record);
        // Another node took the id over while our write was being answered (its takeover request came in
        // before our acknowledgement was read): its claim stands, ours does not.
        if (pending.superseded) return 'lost';
        this.revisions.set(clientId, revision);
        this.claims.set(clientId, nonce);
        // Won: the old holder's due will goes out now, once; a clean start ends what the stream kept for it.
        if (released !== null && released.will !== null) this.publishWill(released.will);
        if (clean && held !== null) this.broker.queues?.discard(clientId, held.subscriptions);
        if (held !== null && held.node !== this.node.nodeId) this.unindex(held.node, key);
        this.enqueue(clientId, async () => {
          await this.index?.put(`${this.node.nodeId}.${key}`, '');
        });
        return { state };
      } catch (err) {
        if (!isConflict(err)) return 'unavailable';
        // Only a write of the very connection that let go (same claim) is waited out; a new claim won.
        const now = await kv.get(key).catch(() => null);
        const holder = now?.operation === 'PUT' ? parseRecord(now.value) : null;
        const sameClaim =
          holder !== null && held !== null && holder.claim === held.claim && holder.node === held.node;
        if (!sameClaim || attempt >= CLAIM_ATTEMPTS) return 'lost';
      }
    }
  }

  /** The CONNECT that claimed `clientId` went away before it took the id: its record goes. */
  abandon(clientId: string): void {
    this.enqueue(clientId, async () => {
      const revision = this.revisions.get(clientId);
      const key = keyOf(clientId);
      if (revision === undefined || key === null || this.broker.sessions.has(clientId)) return;
      this.revisions.delete(clientId);
      this.claims.delete(clientId);
      await this.deleteRecord(key, revision);
    });
  }

  changed(session: Session): void {
    if (!this.revisions.has(session.clientId)) return;
    this.dirty.add(session);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One write per session per turn, however many SUBSCRIBEs that turn handled.
    setImmediate(() => this.flush());
  }

  async persisted(session: Session): Promise<void> {
    // The flush already scheduled runs first (setImmediate keeps its order), then its write is the tail.
    if (this.flushScheduled) await new Promise((resolve) => setImmediate(resolve));
    await this.queues.get(session.clientId);
  }

  ended(session: Session): void {
    this.dirty.delete(session);
    const clientId = session.clientId;
    if (this.handingOver.has(clientId)) return;
    // A takeover on this node ends the old session and attaches the new one in the same turn: the
    // record, which the new connection claimed, stays then.
    setImmediate(() => {
      if (this.broker.sessions.has(clientId)) return;
      this.enqueue(clientId, async () => {
        if (this.broker.sessions.has(clientId)) return;
        const revision = this.revisions.get(clientId);
        const key = keyOf(clientId);
        this.revisions.delete(clientId);
        this.claims.delete(clientId);
        if (revision === undefined || key === null) return;
        await this.deleteRecord(key, revision);
      });
    });
  }

  private recordOf(
    claim: string,
    expirySec: number,
    subscriptions: readonly Subscription[],
    will: WillRecord | null,
  ): string {
    const record: SessionRecord = {
      node: this.node.nodeId,
      incarnation: this.node.incarnation,
      claim,
      expirySec,
      subscriptions,
      will: encodeWill(will),
    };
    const json = JSON.stringify(record);
    if (Buffer.byteLength(json) <= MAX_RECORD_BYTES) return json;
    // The will stays with this node's connection; only a failover loses it.
    this.log.warn(
      { bytes: Buffer.byteLength(json) },
      'mqtt: session record too large, kept without its will',
    );
    return JSON.stringify({ ...record, will: null });
  }

  /**
   * The node holding the record lets go: asked when it is live; when it is gone (dead, confirmed by the
   * bucket, or an earlier process of ours), its record decides, and its will is due where MQTT says so
   * (a will without delay, or a clean start ending the session): published once this claim has won.
   */
  private async letGo(
    clientId: string,
    clean: boolean,
    held: SessionRecord,
  ): Promise<Released | 'unavailable'> {
    const { membership } = this.node;
    const mine = held.node === this.node.nodeId;
    const orphan = this.orphans.get(clientId);
    if (orphan !== undefined) {
      this.release(clientId, orphan, clean);
      return { state: clean ? null : stateOf(held), will: null };
    }
    if (mine && held.incarnation === this.node.incarnation)
      return { state: clean ? null : stateOf(held), will: null };
    if (!mine) {
      try {
        const state = await this.node.request<SessionState | null>(held.node, TAKEOVER, {
          clientId,
          clean,
        } satisfies TakeoverRequest);
        // A holder that has no such session any more (it let go for a claim whose write then failed, with
        // JetStream recovering) leaves its record to decide: what it wrote there last is not lost.
        return { state: state ?? (clean ? null : stateOf(held)), will: null };
      } catch (err) {
        if (!(err instanceof NoHolderError || err instanceof NodeTimeoutError)) throw err;
        // Slow or cut off is not dead: only a death the bucket confirms lets the record decide.
        if (!(await membership.confirmDead(held.node, held.incarnation))) return 'unavailable';
        this.log.warn({ clientId, node: held.node }, 'mqtt: the holding node is gone, its record decides');
      }
    }
    const will = decodeWill(held.will);
    return {
      state: clean ? null : stateOf(held),
      will: will !== null && (clean || will.delaySec === 0) ? will : null,
    };
  }

  private enqueue(clientId: string, op: () => Promise<void>): void {
    const tail = (this.queues.get(clientId) ?? Promise.resolve()).then(op).catch((err: unknown) => {
      this.log.warn({ clientId, err: (err as Error).message }, 'mqtt: session record write failed');
    });
    this.queues.set(clientId, tail);
    void tail.then(() => {
      if (this.queues.get(clientId) === tail) this.queues.delete(clientId);
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const sessions = [...this.dirty];
    this.dirty.clear();
    for (const session of sessions) this.enqueue(session.clientId, () => this.write(session));
  }

  private async write(session: Session): Promise<void> {
    const kv = this.sessions;
    const clientId = session.clientId;
    const key = keyOf(clientId);
    const revision = this.revisions.get(clientId);
    if (
      kv === null ||
      key === null ||
      revision === undefined ||
      this.broker.sessions.get(clientId) !== session
    ) {
      return;
    }
    const nonce = this.claims.get(clientId) ?? '';
    const record = this.recordOf(nonce, session.expirySec, [...session.subscriptions.values()], session.will);
    try {
      this.revisions.set(clientId, await kv.update(key, record, revision));
    } catch (err) {
      if (!isConflict(err)) throw err;
      // A newer claim of this node's own moved the revision on: nothing lost, the next write uses it.
      if (this.revisions.get(clientId) !== revision) return;
      const now = await kv.get(key).catch(() => null);
      const holder = now?.operation === 'PUT' ? parseRecord(now.value) : null;
      if (holder !== null && holder.claim === nonce && holder.node === this.node.nodeId) return;
      // Another node took the id (its CONNECT won): the connection here lets go too.
      this.log.info({ clientId }, 'mqtt: session taken by another node, letting go here');
      this.revisions.delete(clientId);
      this.claims.delete(clientId);
      this.handingOver.add(clientId);
      try {
        session.owner?.takeOver();
        if (this.broker.sessions.get(clientId) === session) {
          session.clearTimers(this.broker.clock);
          this.broker.endSession(session, true);
        }
      } finally {
        this.handingOver.delete(clientId);
      }
    }
  }

  /** On the node holding `clientId`: let go of it for the node asking. */
  private takeover(request: TakeoverRequest): SessionState | null {
    const clientId = String(request?.clientId);
    const clean = request?.clean === true;
    const claiming = this.claiming.get(clientId);
    if (claiming !== undefined) claiming.superseded = true;
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
      this.claims.delete(clientId);
    }
  }

  /**
   * At start, once the bus bridge is up (a will goes out to every node): records of nodes that are not
   * live, and of an earlier process under this node id, are adopted.
   */
  async sweep(): Promise<void> {
    const index = this.index;
    if (index === null) return;
    const nodes = new Set<string>();
    try {
      for await (const key of await index.keys()) nodes.add(key.slice(0, key.indexOf('.')));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'mqtt: session index not listed');
      return;
    }
    for (const node of nodes) {
      if (node === this.node.nodeId || !this.node.membership.isLive(node)) await this.adoptFrom(node);
    }
  }

  /**
   * Records left by `node` (dead, or restarted as a new process): this node races the others for each;
   * each one won is adopted. A node only thought dead (this node's view) keeps its records.
   */
  private async adoptFrom(node: string): Promise<void> {
    const index = this.index;
    const kv = this.sessions;
    if (index === null || kv === null) return;
    const { membership } = this.node;
    const live = node === this.node.nodeId || membership.isLive(node);
    if (!live && !(await membership.confirmDead(node))) return;
    const current = node === this.node.nodeId ? this.node.incarnation : membership.incarnationOf(node);
    const keys: string[] = [];
    try {
      for await (const entry of await index.keys(`${node}.>`)) keys.push(entry.slice(node.length + 1));
    } catch (err) {
      this.log.warn({ node, err: (err as Error).message }, 'mqtt: sessions of a dead node not listed');
      return;
    }
    for (const key of keys) {
      if (this.stopped) return;
      try {
        const entry = await kv.get(key);
        const record = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
        if (entry === null || record === null || record.node !== node) continue;
        if (live && record.incarnation === current) continue;
        const clientId = Buffer.from(key, 'base64url').toString('utf8');
        if (this.broker.sessions.has(clientId) || this.orphans.has(clientId)) continue;
        const adopted: SessionRecord = {
          ...record,
          node: this.node.nodeId,
          incarnation: this.node.incarnation,
        };
        const revision = await kv.update(key, JSON.stringify(adopted), entry.revision);
        if (node !== this.node.nodeId) this.unindex(node, key);
        await this.index?.put(`${this.node.nodeId}.${key}`, '');
        this.adopt(clientId, adopted, revision);
      } catch {
        // Another survivor won this one, or its client reconnected first.
      }
    }
  }

  private adopt(clientId: string, record: SessionRecord, revision: number): void {
    const orphan: Orphan = { record, revision, willTimer: null, expiryTimer: null };
    this.orphans.set(clientId, orphan);
    this.log.info({ clientId }, 'mqtt: adopted the session of a node that is gone');
    const { clock } = this.broker;
    const will = decodeWill(record.will);
    if (will !== null) {
      const delay = Math.min(will.delaySec, record.expirySec);
      const publish = (): void => {
        orphan.willTimer = null;
        this.publishWill(will);
        this.forgetWill(clientId, orphan);
      };
      if (delay === 0) publish();
      else orphan.willTimer = clock.after(delay * 1000, publish);
    }
    if (record.expirySec === 0) return this.expire(clientId, orphan);
    orphan.expiryTimer = clock.after(record.expirySec * 1000, () => this.expire(clientId, orphan));
  }

  /** A will that went out leaves the record, so no later adopter publishes it again. */
  private forgetWill(clientId: string, orphan: Orphan): void {
    const key = keyOf(clientId);
    if (key === null) return;
    this.enqueue(clientId, async () => {
      if (this.orphans.get(clientId) !== orphan || this.sessions === null) return;
      const record: SessionRecord = { ...orphan.record, will: null };
      orphan.revision = await this.sessions.update(key, JSON.stringify(record), orphan.revision);
    });
  }

  /** An orphan's expiry: a will still waiting goes out, the record goes. */
  private expire(clientId: string, orphan: Orphan): void {
    if (orphan.willTimer !== null) {
      const will = decodeWill(orphan.record.will);
      if (will !== null) this.publishWill(will);
    }
    this.cancel(orphan);
    this.orphans.delete(clientId);
    this.broker.queues?.discard(clientId, orphan.record.subscriptions);
    const key = keyOf(clientId);
    if (key === null) return;
    this.enqueue(clientId, () => this.deleteRecord(key, orphan.revision));
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
    this.broker.publishWill(message, will.principal);
  }

  /** Deletes this node's record if it is still the one written at `revision`; its index entry only then. */
  private async deleteRecord(key: string, revision: number): Promise<void> {
    try {
      await this.sessions?.delete(key, { previousSeq: revision });
    } catch {
      return;
    }
    this.unindex(this.node.nodeId, key);
  }

  private unindex(node: string, key: string): void {
    this.index?.delete(`${node}.${key}`).catch(() => undefined);
  }
}

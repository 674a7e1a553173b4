import { type ClusterNode } from '#broker/cluster';
import { type TimerHandle } from '#broker/kit';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { type SessionBucket } from './session-bucket.js';
import { EMPTY_STATE, type WillRecord } from '../session-state.js';
import { decodeWill, graceOf, isConflict, keyOf, parseRecord, type SessionRecord } from './session-record.js';

/** How long a will or an expiry that NATS did not take waits before it tries again. */
const RETRY_MS = 1000;

/** A dead node's session this node adopted: its will and expiry run here until its client is back. */
interface Orphan {
  readonly record: SessionRecord;
  revision: number;
  willTimer: TimerHandle | null;
  expiryTimer: TimerHandle | null;
}

/** A will of a session that has no connection here goes out, its expiry counted from now. */
export function publishWill(broker: MqttBroker, will: WillRecord): void {
  const message =
    will.expirySec === null
      ? will.message
      : { ...will.message, expiresAt: broker.clock.now() + will.expirySec * 1000 };
  broker.publishWill(message, will.principal);
}

/**
 * The sessions of dead nodes (or of an earlier process under this node id) that this node won the race
 * for: each one's will goes out after its delay, once, and its record ends at its expiry, unless its
 * client comes back first.
 */
export class OrphanSessions {
  private readonly orphans = new Map<string, Orphan>();
  private stopped = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly bucket: SessionBucket,
    private readonly log: Logger,
  ) {}

  /** Shutdown: no orphan's timer fires any more (the others adopt them when this node has left). */
  stop(): void {
    this.stopped = true;
    for (const orphan of this.orphans.values()) this.cancel(orphan);
    this.orphans.clear();
  }

  /**
   * At start, once the bus bridge is up (a will goes out to every node): records of nodes that are not
   * live, and of an earlier process under this node id, are adopted.
   */
  async sweep(): Promise<void> {
    const index = this.bucket.index;
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
  async adoptFrom(node: string): Promise<void> {
    const index = this.bucket.index;
    const kv = this.bucket.sessions;
    if (index === null || kv === null) return;
    const { membership } = this.node;
    const self = node === this.node.nodeId;
    if (!self && !membership.isLive(node) && !(await membership.awaitDeath(node))) {
      // Back meanwhile as a new process: the records of the one that died are still to adopt.
      if (!membership.isLive(node)) return;
    }
    const live = self || membership.isLive(node);
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
        // Indexed first: a crash right after the record's write still leaves the record findable.
        await index.put(`${this.node.nodeId}.${key}`, '');
        let revision: number;
        try {
          revision = await kv.update(key, JSON.stringify(adopted), entry.revision);
        } catch (err) {
          const mine = this.broker.sessions.has(clientId) || this.orphans.has(clientId);
          if (node !== this.node.nodeId && !mine) this.bucket.unindex(this.node.nodeId, key);
          throw err;
        }
        if (node !== this.node.nodeId) this.bucket.unindex(node, key);
        this.log.info({ clientId }, 'mqtt: adopted the session of a node that is gone');
        this.adopt(clientId, adopted, revision, graceOf(adopted));
      } catch {
        // Another survivor won this one, or its client reconnected first.
      }
    }
  }

  /**
   * The client of an orphan is back (here or elsewhere): the orphan, if `clientId` is one, is let go (on a
   * clean start its waiting will goes out now). Its record, or null when `clientId` is no orphan here.
   * `revision` is the record's as the claim read it: past the orphan's, the record moved on while this
   * node was away (another node holds it, maybe with its client connected there), so the orphan is let
   * go as `lost` does and null returned: the claim must ask the node the record names.
   */
  releaseIfOrphan(clientId: string, clean: boolean, revision: number): SessionRecord | null {
    const orphan = this.orphans.get(clientId);
    if (orphan === undefined) return null;
    if (revision > orphan.revision) {
      this.release(clientId, orphan, false);
      return null;
    }
    this.release(clientId, orphan, clean);
    return orphan.record;
  }

  /**
   * The record of an orphan moved on without this node (another node holds it or ended it): the orphan is
   * let go without its will; its record and consumers belong to the new holder. True if it was one.
   */
  lost(clientId: string, revision: number): boolean {
    const orphan = this.orphans.get(clientId);
    if (orphan === undefined || revision <= orphan.revision) return false;
    this.release(clientId, orphan, false);
    return true;
  }

  /**
   * A session of this node's that let its connection go while this node was cut off from the cluster:
   * it waits here as an orphan under the lease this node had (`revision`), like an adopted one; if the
   * others adopted it meanwhile, the lease check on reconnecting lets it go without its will.
   */
  keep(clientId: string, record: SessionRecord, revision: number): void {
    this.log.info({ clientId }, 'mqtt: kept a session whose connection was let go, as an orphan');
    this.adopt(clientId, record, revision, graceOf(record));
  }

  /**
   * This node let go of `clientId` for another node's claim (`record`: the session as handed over, with a
   * will still due). Until the claimer's write lands the record names this node, and a claim that never
   * lands (its node died or was cut off right after asking) would leave it to nobody: so it waits here as
   * an orphan under this node's lease, its will and expiry counted from `windowSec` on, by when a claim
   * still under way has landed. The claim's write moves the record on, which lets the orphan go.
   */
  awaitClaim(clientId: string, record: SessionRecord, revision: number, windowSec: number): void {
    this.adopt(clientId, record, revision, windowSec);
  }

  /**
   * The orphan of `clientId`, if it is one, handed over to another node's claim: released like
   * `releaseIfOrphan`, then kept until that claim lands (`awaitClaim`). Its record, or null.
   */
  handOver(clientId: string, clean: boolean, windowSec: number): SessionRecord | null {
    const orphan = this.orphans.get(clientId);
    if (orphan === undefined) return null;
    const waiting = orphan.willTimer !== null;
    this.release(clientId, orphan, clean);
    const kept: SessionRecord = clean
      ? { ...orphan.record, ...EMPTY_STATE, will: null }
      : { ...orphan.record, will: waiting ? orphan.record.will : null };
    this.awaitClaim(clientId, kept, orphan.revision, windowSec);
    return orphan.record;
  }

  /** The client ids of the orphans, to check their leases. */
  held(): string[] {
    return [...this.orphans.keys()];
  }

  /**
   * A session this node acts for without a connection. The connection may not be lost yet (a node thought
   * dead may only be paused or cut off, its client still connected to it; a claimer's write may still be
   * landing): it counts as lost only after `grace` seconds (for an adopted session 1.5 keep-alives, as a
   * silent client's would), and the will's delay and the session's expiry run from then. Each act (the
   * will, the expiry) is done under the lease: only if the record is still the one this node wrote.
   */
  private adopt(clientId: string, record: SessionRecord, revision: number, grace: number): void {
    const orphan: Orphan = { record, revision, willTimer: null, expiryTimer: null };
    this.orphans.set(clientId, orphan);
    const { clock } = this.broker;
    const will = decodeWill(record.will);
    if (will !== null) {
      const delay = grace + Math.min(will.delaySec, record.expirySec);
      const publish = (): void => {
        orphan.willTimer = null;
        this.publishUnderLease(clientId, orphan, will);
      };
      if (delay === 0) publish();
      else orphan.willTimer = clock.after(delay * 1000, publish);
    }
    if (grace + record.expirySec === 0) return this.expire(clientId, orphan);
    orphan.expiryTimer = clock.after((grace + record.expirySec) * 1000, () => this.expire(clientId, orphan));
  }

  /**
   * The will goes out once, under the lease: the record drops it first (so no later adopter publishes it
   * again), and only if that write finds the record as this node left it is the will published.
   */
  private publishUnderLease(clientId: string, orphan: Orphan, will: WillRecord): void {
    const key = keyOf(clientId);
    if (key === null) return;
    this.bucket.enqueue(clientId, async () => {
      const kv = this.bucket.sessions;
      if (this.orphans.get(clientId) !== orphan || kv === null) return;
      const record: SessionRecord = { ...orphan.record, will: null };
      try {
        orphan.revision = await kv.update(key, JSON.stringify(record), orphan.revision);
      } catch (err) {
        if (isConflict(err) && (await this.stillHeld(key, orphan)))
          return this.publishUnderLease(clientId, orphan, will);
        // The record moved on: its client is back elsewhere, or another node holds it.
        if (isConflict(err)) this.release(clientId, orphan, false);
        // NATS did not answer: the will waits for it.
        else
          orphan.willTimer = this.broker.clock.after(RETRY_MS, () =>
            this.publishUnderLease(clientId, orphan, will),
          );
        return;
      }
      publishWill(this.broker, will);
    });
  }

  /**
   * An orphan's expiry, under the lease: the record goes if it is still the one this node wrote, and only
   * then do a will still waiting go out and the stream's consumers go.
   */
  private expire(
    clientId: string,
    orphan: Orphan,
    waiting = orphan.willTimer !== null ? decodeWill(orphan.record.will) : null,
  ): void {
    this.cancel(orphan);
    const key = keyOf(clientId);
    if (key === null) {
      this.orphans.delete(clientId);
      return;
    }
    this.bucket.enqueue(clientId, async () => {
      if (this.orphans.get(clientId) !== orphan) return;
      const outcome = await this.bucket.deleteRecord(key, orphan.revision);
      if (outcome === 'failed') {
        // NATS did not answer: the expiry waits for it.
        orphan.expiryTimer = this.broker.clock.after(RETRY_MS, () => this.expire(clientId, orphan, waiting));
        return;
      }
      if (outcome === 'moved' && (await this.stillHeld(key, orphan)))
        return this.expire(clientId, orphan, waiting);
      this.orphans.delete(clientId);
      if (outcome === 'moved') return;
      if (waiting !== null) publishWill(this.broker, waiting);
      this.broker.queues?.discard(clientId, orphan.record.subscriptions);
    });
  }

  /**
   * A write under the lease met another revision: true when the record is still this orphan's (a write of
   * this node's session that was under way when it let go landed after), its revision the lease from now.
   */
  private async stillHeld(key: string, orphan: Orphan): Promise<boolean> {
    const entry = await this.bucket.sessions?.get(key).catch(() => null);
    const now = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
    const { record } = orphan;
    if (
      entry === null ||
      entry === undefined ||
      now === null ||
      now.node !== record.node ||
      now.incarnation !== record.incarnation ||
      now.claim !== record.claim ||
      entry.revision <= orphan.revision
    )
      return false;
    orphan.revision = entry.revision;
    return true;
  }

  /** The orphan's client is back (here or elsewhere): on a clean start its waiting will goes out now. */
  private release(clientId: string, orphan: Orphan, clean: boolean): void {
    if (clean && orphan.willTimer !== null) {
      const will = decodeWill(orphan.record.will);
      if (will !== null) publishWill(this.broker, will);
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
}

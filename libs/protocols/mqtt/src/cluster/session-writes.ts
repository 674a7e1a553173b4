import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { type Persisted } from '../session-directory.js';
import { type Session, type SessionOwner } from '../mqtt-session.js';
import { handedStateOf } from '../session-lifecycle.js';
import { type SessionBucket } from './session-bucket.js';
import { isConflict, keyOf, parseRecord, type SessionRecord } from './session-record.js';

/**
 * A held session's record kept in step with its session: one write per session per turn, the record
 * gone when the session ends here; a write that finds another node's claim lets the connection go.
 */
export class SessionWrites {
  private readonly dirty = new Set<Session>();
  /** Sessions whose latest record write NATS did not take: their record lags what they hold. */
  private readonly unwritten = new WeakSet<Session>();
  private flushScheduled = false;

  constructor(
    private readonly broker: MqttBroker,
    private readonly bucket: SessionBucket,
    /** Client ids being handed to another node (ClusterSessions' own set). */
    private readonly handingOver: Set<string>,
    private readonly log: Logger,
  ) {}

  changed(session: Session): void {
    if (!this.bucket.revisions.has(session.clientId)) return;
    this.dirty.add(session);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One write per session per turn, however many SUBSCRIBEs that turn handled.
    setImmediate(() => this.flush());
  }

  async persisted(session: Session): Promise<Persisted> {
    // The flush already scheduled runs first (setImmediate keeps its order), then its write is the tail.
    if (this.flushScheduled) await new Promise((resolve) => setImmediate(resolve));
    await this.bucket.tail(session.clientId);
    // A write that found another node's claim let the session go (lost): it is not this node's to act for.
    const ours =
      this.bucket.revisions.has(session.clientId) && this.broker.sessions.get(session.clientId) === session;
    if (!ours) return 'moved';
    return this.unwritten.has(session) ? 'failed' : 'written';
  }

  ended(session: Session): void {
    this.dirty.delete(session);
    const clientId = session.clientId;
    if (this.handingOver.has(clientId)) return;
    // A takeover on this node ends the old session and attaches the new one in the same turn: the
    // record, which the new connection claimed, stays then.
    setImmediate(() => {
      if (this.broker.sessions.has(clientId)) return;
      this.bucket.enqueue(clientId, async () => {
        if (this.broker.sessions.has(clientId)) return;
        const revision = this.bucket.revisions.get(clientId);
        const key = keyOf(clientId);
        this.bucket.revisions.delete(clientId);
        this.bucket.claims.delete(clientId);
        if (revision === undefined || key === null) return;
        await this.bucket.deleteRecord(key, revision);
      });
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const sessions = [...this.dirty];
    this.dirty.clear();
    for (const session of sessions) this.bucket.enqueue(session.clientId, () => this.write(session));
  }

  /** `again`: this change met this node's own earlier write, landed unanswered, and is written over it. */
  private async write(session: Session, again = false): Promise<void> {
    const kv = this.bucket.sessions;
    const clientId = session.clientId;
    const key = keyOf(clientId);
    const revision = this.bucket.revisions.get(clientId);
    if (
      kv === null ||
      key === null ||
      revision === undefined ||
      this.broker.sessions.get(clientId) !== session
    ) {
      return;
    }
    const claimed = this.bucket.claims.get(clientId) ?? { nonce: '', keepAliveSec: 0 };
    // With what the stream gave it: a node that takes the record over while this one is paused (its
    // takeover answer never comes, or nobody listens for it after a NATS restart) must still know which
    // QoS 2 messages the client completed, or it sends them as new.
    const record = this.bucket.recordOf(claimed, handedStateOf(session), session.will);
    try {
      this.bucket.revisions.set(clientId, await kv.update(key, record, revision));
      this.unwritten.delete(session);
    } catch (err) {
      if (!isConflict(err)) {
        this.unwritten.add(session);
        throw err;
      }
      // Let go meanwhile (handed to another node, or fenced): the record is not this node's to write.
      if (this.bucket.revisions.get(clientId) !== revision) return;
      const now = await kv.get(key).catch(() => null);
      if (
        now !== null &&
        this.bucket.holds(clientId, now.operation === 'PUT' ? parseRecord(now.value) : null)
      ) {
        // This node's own write landed though its answer never came (a JetStream request that timed out
        // after NATS took it): the record is still this claim's, one revision on. Once more over it; else
        // every later write would meet the same conflict and the record would never hold them.
        this.unwritten.add(session);
        if (again) return;
        this.bucket.revisions.set(clientId, now.revision);
        return this.write(session, true);
      }
      // Another node took the id (its CONNECT won): the connection here lets go too.
      this.lost(clientId, now?.created.getTime() ?? null);
    }
  }

  /**
   * The record of `clientId` is no longer this node's (another node took it, or adopted it while this one
   * was paused or cut off, or ended it): the session here lets go at once (its connection gets DISCONNECT
   * 0x8E), without a will and without touching the record or the stream's consumers, which the new holder
   * uses. `movedAtMs`, when the server stored the record that moved (null: not known), tells whether a
   * stream message went to the connection here after the move: the session on two nodes at once, which
   * the fencing exists to prevent, logged as an error (timed by the server's clock against this node's:
   * they must agree, as membership already requires).
   */
  lost(clientId: string, movedAtMs: number | null): void {
    const sentAtMs = this.broker.sessions.get(clientId)?.streamSentAtMs ?? 0;
    if (movedAtMs !== null && sentAtMs > movedAtMs) {
      this.log.error(
        { clientId, afterMs: sentAtMs - movedAtMs },
        'mqtt: a stream message went to a connection after its session record moved',
      );
    }
    this.log.info({ clientId }, 'mqtt: session taken by another node, letting go here');
    this.letGo(clientId, (owner) => owner.takeOver());
  }

  /**
   * This node lost touch with the cluster and the others may soon adopt its sessions: a persistent
   * session, or one with a will, lets its connection go (DISCONNECT 0x9C, no will) and its record as this
   * node last knew it is returned with its revision, for the orphans to keep under that lease. Null for a
   * session that stays (a clean one without a will: nobody else would act for it).
   */
  fence(clientId: string): { record: SessionRecord; revision: number } | null {
    const session = this.broker.sessions.get(clientId);
    const revision = this.bucket.revisions.get(clientId);
    const claimed = this.bucket.claims.get(clientId);
    if (session === undefined || revision === undefined || claimed === undefined) return null;
    if (session.expirySec === 0 && session.will === null) return null;
    const record = parseRecord(
      Buffer.from(this.bucket.recordOf(claimed, handedStateOf(session), session.will)),
    );
    if (record === null) return null;
    this.letGo(clientId, (owner) => owner.useAnotherServer());
    return { record, revision };
  }

  private letGo(clientId: string, close: (owner: SessionOwner) => void): void {
    this.bucket.revisions.delete(clientId);
    this.bucket.claims.delete(clientId);
    const session = this.broker.sessions.get(clientId);
    if (session === undefined) return;
    this.dirty.delete(session);
    this.handingOver.add(clientId);
    try {
      // The will is the new holder's now (a claimer's at once, an adopter's after its grace): the connection
      // here ends without it, its session no longer its own when it closes.
      const owner = session.owner;
      session.owner = null;
      if (owner !== null) close(owner);
      if (this.broker.sessions.get(clientId) === session) {
        session.clearTimers(this.broker.clock);
        this.broker.endSession(session, true);
      }
    } finally {
      this.handingOver.delete(clientId);
    }
  }
}

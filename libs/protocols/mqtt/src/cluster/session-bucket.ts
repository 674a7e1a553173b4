import { type ClusterNode } from '#broker/cluster';
import { type KV } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type SessionState, type WillRecord } from '../session-state.js';
import { encodeWill, isConflict, MAX_RECORD_BYTES, type SessionRecord } from './session-record.js';

/** A claim this node made for a client id: its nonce, and the keep-alive of the connection it is for. */
export interface Claimed {
  readonly nonce: string;
  readonly keepAliveSec: number;
}

/**
 * The buckets the session records live in, what this node wrote there last, and the one queue per
 * client id through which every write of its record goes, in order, each with the revision the
 * previous one left.
 */
export class SessionBucket {
  sessions: KV | null = null;
  /** `<node>.<key>` for each record a node holds, so the survivors find a dead node's records. */
  index: KV | null = null;
  /** The revision of each record this node wrote last. */
  readonly revisions = new Map<string, number>();
  /** The claim of each record this node holds. */
  readonly claims = new Map<string, Claimed>();
  /** Per client id, the tail of its record writes. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  async open(): Promise<void> {
    this.sessions = await this.node.bucket('mqtt-sessions', { history: 1 });
    this.index = await this.node.bucket('mqtt-session-nodes', { history: 1 });
  }

  /** This node's record of a session, as it is written. */
  recordOf(claimed: Claimed, state: SessionState, will: WillRecord | null): string {
    const record: SessionRecord = {
      node: this.node.nodeId,
      incarnation: this.node.incarnation,
      claim: claimed.nonce,
      keepAliveSec: claimed.keepAliveSec,
      ...state,
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

  enqueue(clientId: string, op: () => Promise<void>): void {
    const tail = (this.queues.get(clientId) ?? Promise.resolve()).then(op).catch((err: unknown) => {
      this.log.warn({ clientId, err: (err as Error).message }, 'mqtt: session record write failed');
    });
    this.queues.set(clientId, tail);
    void tail.then(() => {
      if (this.queues.get(clientId) === tail) this.queues.delete(clientId);
    });
  }

  /** Runs `op` in `clientId`'s queue, after the writes before it and before those after, for its outcome. */
  run<T>(clientId: string, op: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.enqueue(clientId, () => op().then(resolve, reject)));
  }

  /** The tail of `clientId`'s record writes, if any are under way. */
  tail(clientId: string): Promise<void> | undefined {
    return this.queues.get(clientId);
  }

  /**
   * Deletes this node's record if it is still the one written at `revision`, and its index entry only
   * then: 'moved' when the record moved on (another node holds it now), 'failed' when NATS did not take it.
   */
  async deleteRecord(key: string, revision: number): Promise<'deleted' | 'moved' | 'failed'> {
    if (this.sessions === null) return 'failed';
    try {
      await this.sessions.delete(key, { previousSeq: revision });
    } catch (err) {
      return isConflict(err) ? 'moved' : 'failed';
    }
    this.unindex(this.node.nodeId, key);
    return 'deleted';
  }

  /** Whether `record` is the one this node wrote for its claim of `clientId`. */
  holds(clientId: string, record: SessionRecord | null): boolean {
    return (
      record !== null &&
      record.node === this.node.nodeId &&
      record.incarnation === this.node.incarnation &&
      record.claim === this.claims.get(clientId)?.nonce
    );
  }

  unindex(node: string, key: string): void {
    this.index?.delete(`${node}.${key}`).catch(() => undefined);
  }
}

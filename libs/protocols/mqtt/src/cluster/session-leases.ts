import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type Logger } from 'pino';
import { type OrphanSessions } from './orphan-sessions.js';
import { type SessionBucket } from './session-bucket.js';
import { keyOf, parseRecord, type SessionRecord } from './session-record.js';
import { type SessionWrites } from './session-writes.js';

/** Records read at once when the leases are checked. */
const CHECK_READS = 64;

/**
 * The leases this node holds on session records, kept honest: a record's revision as this node wrote it
 * is its lease. Every node watches the records, and the moment another node takes one this node holds
 * (a CONNECT elsewhere, an adoption while this node was paused or cut off, an expiry), the session here
 * lets go (its connection gets DISCONNECT 0x8E), as nats-server's MQTT closes a connection whose session
 * another server took. A watch misses what changed while this process was stopped or NATS was away, so
 * after either (membership's resume) every lease is read again before this node goes on.
 */
export class SessionLeases {
  private watch: BucketWatch | null = null;
  private offResume: (() => void) | null = null;
  private offLeaseLost: (() => void) | null = null;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly node: ClusterNode,
    private readonly bucket: SessionBucket,
    private readonly writes: SessionWrites,
    private readonly orphans: OrphanSessions,
    /** Client ids with a claim under way here: their record is about to change by this node's hand. */
    private readonly claiming: ReadonlyMap<string, unknown>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const kv = this.bucket.sessions;
    if (kv === null) return;
    const { heartbeatMs, nodeTimeoutMs } = this.node.config;
    this.watch = await watchBucket(
      kv,
      (entry) =>
        this.saw(
          entry.key,
          entry.revision,
          entry.operation === 'PUT' ? parseRecord(entry.value) : null,
          entry.created.getTime(),
        ),
      {
        log: this.log,
        what: 'mqtt sessions',
        retryMs: heartbeatMs,
        loadTimeoutMs: nodeTimeoutMs,
        updatesOnly: true,
      },
    );
    this.offResume = this.node.membership.onResume(() => this.check());
    this.offLeaseLost = this.node.membership.onLeaseLost(() => this.fence());
  }

  stop(): void {
    this.offResume?.();
    this.offLeaseLost?.();
    this.watch?.stop();
  }

  /**
   * Reads every record this node holds (its sessions and its orphans) and lets go of those that moved on.
   * A read that fails (JetStream not back yet after a restart) starts the check again a moment later,
   * within `nodeTimeoutMs`: the deliveries waiting for it (`Membership.caughtUp`) must not go on unchecked.
   */
  check(): Promise<void> {
    // One check at a time; a resume during one is covered by the reads it has yet to make.
    this.checking ??= this.checkUntilDone().finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkUntilDone(): Promise<void> {
    const { heartbeatMs, nodeTimeoutMs } = this.node.config;
    const until = performance.now() + nodeTimeoutMs;
    while (!(await this.checkAll()) && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs / 4));
    }
  }

  /** One pass over the records held, `CHECK_READS` at a time; false when a read failed. */
  private async checkAll(): Promise<boolean> {
    const kv = this.bucket.sessions;
    if (kv === null) return true;
    const held = [...this.bucket.revisions.keys(), ...this.orphans.held()];
    let lost = 0;
    try {
      for (let i = 0; i < held.length; i += CHECK_READS) {
        const reads = held.slice(i, i + CHECK_READS).map(async (clientId) => {
          const key = keyOf(clientId);
          if (key === null) return;
          const entry = await kv.get(key);
          const record = entry?.operation === 'PUT' ? parseRecord(entry.value) : null;
          const movedAtMs = entry?.created.getTime() ?? null;
          if (this.saw(key, entry?.revision ?? Number.MAX_SAFE_INTEGER, record, movedAtMs)) lost++;
        });
        await Promise.all(reads);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'mqtt: session leases not checked yet');
      return false;
    }
    if (held.length > 0) this.log.info({ held: held.length, lost }, 'mqtt: session leases checked');
    return true;
  }

  /**
   * This node's heartbeats went unwritten (cut off from NATS, JetStream away): before the others may
   * count it dead and adopt its sessions, each one they would act for (persistent, or with a will) lets
   * its connection go (0x9C: the client reconnects to another node) and waits here as an orphan, its will
   * and expiry done under the lease this node had, if it still has it once NATS answers again.
   */
  private fence(): void {
    let fenced = 0;
    for (const clientId of [...this.bucket.revisions.keys()]) {
      const kept = this.writes.fence(clientId);
      if (kept === null) continue;
      this.orphans.keep(clientId, kept.record, kept.revision);
      fenced++;
    }
    if (fenced > 0) this.log.warn({ fenced }, 'mqtt: cut off from the cluster, sessions let go here');
  }

  /** A record as it is now (stored at `movedAtMs`, when known); true when this node held it and lets go. */
  private saw(
    key: string,
    revision: number,
    record: SessionRecord | null,
    movedAtMs: number | null,
  ): boolean {
    const clientId = Buffer.from(key, 'base64url').toString('utf8');
    const ours =
      record !== null && record.node === this.node.nodeId && record.incarnation === this.node.incarnation;
    // A claim under way here writes the record by this node's hand: its own write is no loss. A record
    // another node wrote meanwhile (an adoption while this node was paused) is, claim or not: the session
    // held here goes now, not when the claim ends (which may be 'lost', leaving it served).
    if (ours && this.claiming.has(clientId)) return false;
    const mine = this.bucket.revisions.get(clientId);
    if (mine !== undefined && revision > mine && !this.bucket.holds(clientId, record)) {
      this.writes.lost(clientId, movedAtMs);
      return true;
    }
    return !ours && this.orphans.lost(clientId, revision);
  }
}

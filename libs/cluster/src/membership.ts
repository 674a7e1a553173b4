import { type KV, type KvEntry, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type BucketWatch, watchBucket } from './bucket-watch.js';

export interface MembershipOptions {
  readonly nodeId: string;
  /** This process; a node restarted under the same id is a new incarnation. */
  readonly incarnation: string;
  readonly heartbeatMs: number;
  readonly nodeTimeoutMs: number;
  readonly logger: Logger;
  /** Whether this node's NATS connection is up; while it is down nobody is declared dead. */
  readonly connected: () => boolean;
  /** Whether any of `nodes` answers this node over core NATS within a heartbeat. */
  readonly reachesAny: (nodes: readonly string[]) => Promise<boolean>;
}

/** Why a node left the live set: a clean stop deleted its entry, its beats stopped, or it restarted. */
export type Departure = 'left the cluster' | 'heartbeat timed out' | 'restarted';

export interface MembershipChange {
  readonly node: string;
  readonly up: boolean;
  /** When it went down: why. */
  readonly why?: Departure;
}

/** What a heartbeat entry holds. */
interface Beat {
  readonly incarnation: string;
}

interface Seen {
  /** performance.now() when this node last saw the heartbeat change (or stopped judging, after a gap). */
  at: number;
  /** performance.now() when this node last saw the heartbeat change: never moved on for a gap. */
  beatAt: number;
  incarnation: string;
}

/**
 * Heartbeats a node's own beat may go unconfirmed before it acts under no lease (its deliveries wait):
 * a connection that looks open but carries nothing (a killed server behind a proxy, a half-open path)
 * gives no error, only silence. The others take its holdings without asking only after a longer
 * silence (`leasesLapseIn`), so it has stopped by then.
 */
export const UNCONFIRMED_BEATS = 2;

function beatOf(entry: KvEntry): Beat | null {
  try {
    const beat = entry.json<Beat>();
    return typeof beat?.incarnation === 'string' ? beat : null;
  } catch {
    return null;
  }
}

/**
 * Which nodes are alive, from the engine rather than a protocol of ours: each node renews a heartbeat
 * entry in a KV bucket, every node watches the bucket, and a node whose entry has not changed for
 * `nodeTimeoutMs` (by this node's clock) is dead. A node that stops cleanly deletes its entry, so the
 * others see it go at once; one restarted under the same id shows a new incarnation, and counts as gone
 * and back. A node whose own loop stalled, that lost NATS, or that cannot write its own heartbeat
 * (JetStream away or electing a leader) judges nobody on that gap: the heartbeats it could not read are
 * not the others' fault.
 *
 * The others count this node dead `nodeTimeoutMs` after they last saw its heartbeat change, and then
 * take what it held. So a node whose own heartbeats have not been written for `nodeTimeoutMs` less two
 * heartbeats tells its lease listeners to let go first, when the others may be judging it: they beat on
 * while it cannot, or none of them answers it over NATS (cut off, or NATS itself away: it cannot tell
 * which). When they answer and their beats are stuck too, JetStream is away for all and nobody judges.
 */
export class Membership {
  private readonly seen = new Map<string, Seen>();
  private readonly listeners = new Set<(change: MembershipChange) => void>();
  private readonly resumeListeners = new Set<() => void | Promise<void>>();
  private readonly leaseListeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private watch: BucketWatch | null = null;
  private wasConnected = true;
  /** Whether this node's own last heartbeat was written: while it is not, JetStream is away for it too. */
  private beating = true;
  private lastTick = performance.now();
  /** performance.now() when the resume listeners were last called. */
  private resumedAt = performance.now();
  /** After a stall: the resume listeners' checks under way, until they end (or `nodeTimeoutMs`). */
  private catchingUp: Promise<void> | null = null;
  /** performance.now() when the last heartbeat that was written was sent. */
  private lastBeat = performance.now();
  /** Whether the lease listeners were told, since the last heartbeat written. */
  private leaseLost = false;
  /** performance.now() when another node's heartbeat was last seen written. */
  private lastPeerBeat = 0;
  /** performance.now() when this node's NATS connection last came back. */
  private reconnectedAt = Number.NEGATIVE_INFINITY;
  /** While NATS is away: releases what waits in `caughtUp` once the check after its return is done. */
  private awaitingReturn: (() => void) | null = null;
  /** While this node's beats go unconfirmed: releases what waits in `caughtUp` after the next one lands. */
  private awaitingBeat: (() => void) | null = null;
  private probing = false;

  constructor(
    private readonly kv: KV,
    private readonly options: MembershipOptions,
  ) {}

  /**
   * Joins: refuses while another live process beats under this node id, writes the first beat, and
   * resolves once the current members are known.
   */
  async start(): Promise<void> {
    await this.ensureAlone();
    this.lastBeat = performance.now();
    await this.beat();
    this.watch = await watchBucket(this.kv, (entry) => this.saw(entry), {
      log: this.options.logger,
      what: 'cluster nodes',
      retryMs: this.options.heartbeatMs,
      loadTimeoutMs: this.options.nodeTimeoutMs,
    });
    await this.watch.loaded;
    this.lastTick = performance.now();
    this.timer = setInterval(() => this.tick(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Live nodes, this one included, sorted. */
  live(): string[] {
    return [this.options.nodeId, ...this.seen.keys()].sort();
  }

  isLive(node: string): boolean {
    return node === this.options.nodeId || this.seen.has(node);
  }

  /**
   * Asks the bucket itself before acting on a death (adopting the node's sessions, freeing its
   * registrations): false while this node still counts that incarnation live (its absence not yet timed
   * out here); else true unless the node's entry is there, fresh by the server's clock, and of the
   * incarnation this node last knew.
   */
  async confirmDead(node: string, incarnation?: string): Promise<boolean> {
    // Absence is timed by this node, from a healthy connection: a bucket that came back empty (a restarted
    // nats-server keeps no heartbeats) says nothing of a node whose beats this node saw a moment ago.
    const seen = this.seen.get(node);
    if (seen !== undefined && (incarnation === undefined || seen.incarnation === incarnation)) return false;
    const entry = await this.kv.get(node).catch(() => undefined);
    if (entry === undefined) return false;
    if (entry === null) return this.bucketKeptBeats();
    if (entry.operation !== 'PUT') return true;
    if (Date.now() - entry.created.getTime() > this.options.nodeTimeoutMs) return true;
    return incarnation !== undefined && beatOf(entry)?.incarnation !== incarnation;
  }

  /**
   * `confirmDead`, asked again each heartbeat while the bucket cannot tell (a read failed, or it came
   * back empty with a restarted nats-server less than `nodeTimeoutMs` ago), for up to twice
   * `nodeTimeoutMs`: a death acted on once (adopting the node's sessions) is not dropped for a moment's
   * doubt. False at once when `node` is live again (it beat, or restarted as a new process).
   */
  async awaitDeath(node: string): Promise<boolean> {
    const { heartbeatMs, nodeTimeoutMs } = this.options;
    const until = performance.now() + 2 * nodeTimeoutMs;
    while (!(await this.confirmDead(node))) {
      if (this.timer === null || this.isLive(node) || performance.now() > until) return false;
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs));
    }
    return true;
  }

  /**
   * Whether the bucket is old enough that a node missing from it has been absent `nodeTimeoutMs`: the
   * heartbeats live in memory, so a nats-server that restarted comes back with an empty bucket (created
   * again by the first node back), where a live node that has not beaten yet since is missing too.
   */
  private async bucketKeptBeats(): Promise<boolean> {
    const status = await this.kv.status().catch(() => undefined);
    if (status === undefined) return false;
    return Date.now() - Date.parse(status.streamInfo.created) > this.options.nodeTimeoutMs;
  }

  /** The incarnation a live node beats with, as last seen. */
  incarnationOf(node: string): string | undefined {
    return node === this.options.nodeId ? this.options.incarnation : this.seen.get(node)?.incarnation;
  }

  /**
   * Called when what this node knows may be stale: its loop stalled past two heartbeats (a GC pause, a
   * SIGSTOP, a VM stall) or its NATS connection came back. Whatever it holds under a lease it checks
   * before it goes on, and the promise it returns says when it has (see `caughtUp`); returns the
   * unsubscribe.
   */
  onResume(listener: () => void | Promise<void>): () => void {
    this.resumeListeners.add(listener);
    return () => this.resumeListeners.delete(listener);
  }

  /**
   * Null while this node's loop runs on time. After a stall past two heartbeats (a GC pause, a SIGSTOP, a
   * VM stall), what it reads first waited in its sockets meanwhile: a delivery the stream sent before
   * another node took the session over comes before the record's change that says so. So until the
   * resume listeners have checked what this node holds, this is a promise, and whatever is done under a
   * lease (a delivery to a client) waits for it. A stall is seen here at once, before the heartbeat
   * timer that also sees it has run (Node reads its sockets before its late timers).
   */
  caughtUp(): Promise<void> | null {
    const now = performance.now();
    const since = Math.max(this.lastTick, this.resumedAt);
    if (this.catchingUp === null && now - since > 2 * this.options.heartbeatMs) {
      this.resumed(true);
    }
    // This node's beats unconfirmed (see UNCONFIRMED_BEATS): the same wait, until a beat lands and the
    // check after it is done.
    if (this.catchingUp === null && !this.beatConfirmed()) {
      this.catchingUp = new Promise<void>((resolve) => (this.awaitingBeat = resolve));
    }
    return this.catchingUp;
  }

  /**
   * Whether this node's own heartbeat was written within UNCONFIRMED_BEATS heartbeats: while it is not,
   * its deliveries wait (see `caughtUp`).
   */
  beatConfirmed(): boolean {
    return performance.now() - this.lastBeat <= UNCONFIRMED_BEATS * this.options.heartbeatMs;
  }

  /**
   * In how many milliseconds `node` will have stopped acting under its leases, whatever it may still
   * believe (0: it has, or this node does not count it live): once this node has not seen its heartbeat
   * change for `UNCONFIRMED_BEATS` heartbeats and a half, its own beats went unconfirmed at least as
   * long, so its deliveries wait.
   */
  leasesLapseIn(node: string): number {
    const seen = this.seen.get(node);
    if (seen === undefined) return 0;
    const lapse = seen.beatAt + (UNCONFIRMED_BEATS + 0.5) * this.options.heartbeatMs;
    return Math.max(0, Math.ceil(lapse - performance.now()));
  }

  /**
   * Called once this node's heartbeats have gone unwritten for so long that the others may soon count it
   * dead and take what it holds: whatever it holds under a lease, it lets go of now. Called again only
   * after a heartbeat was written (which also calls the resume listeners). Returns the unsubscribe.
   */
  onLeaseLost(listener: () => void): () => void {
    this.leaseListeners.add(listener);
    return () => this.leaseListeners.delete(listener);
  }

  /**
   * Resolves once `node` leaves the live set (its absence timed out here, it left, or it restarted), so
   * that a wait on its answer can end with its death rather than at a time limit; `cancel` stops watching.
   */
  departure(node: string): { readonly left: Promise<void>; cancel(): void } {
    let cancel = (): void => undefined;
    const left = new Promise<void>((resolve) => {
      const off = this.onChange((change) => {
        if (change.node === node && !change.up) resolve();
      });
      cancel = off;
    });
    return { left, cancel };
  }

  /** Called for each node that joins or leaves the live set; returns the unsubscribe. */
  onChange(listener: (change: MembershipChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * NATS went away. Meanwhile the others may take what this node holds (a holder they cannot ask, or
   * whose subscriptions are not back yet, counts as gone), and when NATS is back, what this node reads
   * first was sent before the records' changes that say so: until the resume listeners have checked what
   * it holds after the return, `caughtUp` is a promise (nothing reaches a client from NATS meanwhile).
   */
  disconnected(): void {
    if (this.awaitingReturn !== null) return;
    this.catchingUp = new Promise<void>((resolve) => (this.awaitingReturn = resolve));
  }

  /**
   * NATS came back: the heartbeats missed meanwhile are nobody's fault, and the watch may wait for a
   * consumer the server lost; a new one reads the bucket now. What this node holds is checked before it
   * acts on it again (see `disconnected`). (The ticks catch an outage too, but not one shorter than a
   * heartbeat.)
   */
  reconnected(): void {
    const now = performance.now();
    this.reconnectedAt = now;
    for (const entry of this.seen.values()) entry.at = now;
    this.watch?.restart();
    const release = this.awaitingReturn;
    this.awaitingReturn = null;
    this.resumed(true);
    if (release !== null) void (this.catchingUp ?? Promise.resolve()).then(release);
  }

  /**
   * Whether this node's NATS connection came back within `nodeTimeoutMs`: after a NATS restart every
   * node reconnects, and until a node's subscriptions are back, a request to it finds nobody listening
   * though it lives.
   */
  reconnectedRecently(): boolean {
    return performance.now() - this.reconnectedAt < this.options.nodeTimeoutMs;
  }

  /** Stops renewing and deletes this node's entry, so the others see it leave without waiting. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.watch?.stop();
    await this.kv.delete(this.options.nodeId).catch(() => undefined);
  }

  /** Two processes with one node id would steal each other's state: the second waits, then refuses. */
  private async ensureAlone(): Promise<void> {
    const { nodeId, incarnation, heartbeatMs, nodeTimeoutMs } = this.options;
    const first = await this.kv.get(nodeId);
    if (first === null || first.operation !== 'PUT' || beatOf(first)?.incarnation === incarnation) return;
    if (Date.now() - first.created.getTime() > nodeTimeoutMs) return;
    // A beat under our id, fresh: an earlier process of ours that just died, or a live twin. Wait and see.
    const until = Date.now() + nodeTimeoutMs + heartbeatMs;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs));
      const now = await this.kv.get(nodeId);
      if (now === null || now.operation !== 'PUT') return;
      if (now.revision !== first.revision) {
        throw new Error(
          `another process is running as node ${nodeId} (cluster.nodeId / NODE_ID must be unique)`,
        );
      }
    }
  }

  private tick(): void {
    const now = performance.now();
    const late = now - this.lastTick > this.options.heartbeatMs * 2;
    this.lastTick = now;
    // A stalled loop (late) checks its leases on resume instead: the beat it sends now may well land.
    if (!late) this.checkLease(now);
    if (!this.options.connected()) {
      this.wasConnected = false;
      return;
    }
    if (!this.beating) {
      // This node cannot write its own heartbeat (JetStream away, electing a leader, full): the others'
      // beats fail alike, so nobody is judged until its own write works again.
      for (const entry of this.seen.values()) entry.at = now;
    }
    if (!this.wasConnected || late) {
      // Back from an outage, or this process's loop stalled: the heartbeats it could not read meanwhile
      // wait behind this timer, so nobody is judged on that gap.
      for (const entry of this.seen.values()) entry.at = now;
      // After an outage the watch may wait for a consumer the server lost: a new one reads the bucket now.
      if (!this.wasConnected) this.watch?.restart();
      this.wasConnected = true;
      this.resumed(late);
    }
    this.beat().then(
      () => {
        this.lastBeat = Math.max(this.lastBeat, now);
        const wasLost = this.leaseLost;
        this.leaseLost = false;
        const release = this.awaitingBeat;
        this.awaitingBeat = null;
        if (release !== null) {
          // Deliveries waited for this beat: they go on once what this node holds is checked.
          this.resumed(true);
          void (this.catchingUp ?? Promise.resolve()).then(release);
        } else if (!this.beating || wasLost) this.resumed();
        this.beating = true;
      },
      (err: unknown) => {
        this.beating = false;
        this.options.logger.warn({ err: (err as Error).message }, 'cluster heartbeat not written');
      },
    );
    for (const [node, entry] of this.seen) {
      if (now - entry.at > this.options.nodeTimeoutMs) this.leave(node, 'heartbeat timed out');
    }
  }

  private checkLease(now: number): void {
    const { nodeTimeoutMs, heartbeatMs } = this.options;
    if (this.leaseLost || this.probing || now - this.lastBeat <= nodeTimeoutMs - 2 * heartbeatMs) return;
    const peers = [...this.seen.keys()];
    // Nobody to take anything over.
    if (peers.length === 0) return;
    if (this.lastPeerBeat > this.lastBeat + 2 * heartbeatMs) return this.loseLease(now, 'the others beat on');
    const beat = this.lastBeat;
    this.probing = true;
    this.options.reachesAny(peers).then(
      (reached) => {
        this.probing = false;
        if (!reached && !this.leaseLost && this.lastBeat === beat)
          this.loseLease(performance.now(), 'no other node answers');
      },
      () => (this.probing = false),
    );
  }

  private loseLease(now: number, why: string): void {
    this.leaseLost = true;
    this.options.logger.warn(
      { sinceMs: Math.round(now - this.lastBeat), why },
      'cluster heartbeats not written: letting go of what this node holds before the others take it',
    );
    this.notify(this.leaseListeners, 'membership lease listener failed');
  }

  private async beat(): Promise<void> {
    await this.kv.put(
      this.options.nodeId,
      JSON.stringify({ incarnation: this.options.incarnation } satisfies Beat),
    );
  }

  private saw(entry: KvWatchEntry): void {
    const node = entry.key;
    if (node === this.options.nodeId) return;
    if (entry.operation !== 'PUT') {
      this.leave(node, 'left the cluster');
      return;
    }
    const beat = beatOf(entry);
    if (beat === null) return;
    const known = this.seen.get(node);
    // A node first seen by an old entry (a dead node's last beat, kept until the bucket's age limit) is not
    // live: judged by the server's time of writing (the nodes' clocks must agree within nodeTimeoutMs).
    if (known === undefined && Date.now() - entry.created.getTime() > this.options.nodeTimeoutMs) return;
    if (known !== undefined && known.incarnation !== beat.incarnation) {
      this.leave(node, 'restarted');
    }
    const current = this.seen.get(node);
    const now = performance.now();
    this.lastPeerBeat = now;
    if (current !== undefined) {
      current.at = now;
      current.beatAt = now;
      return;
    }
    this.seen.set(node, { at: now, beatAt: now, incarnation: beat.incarnation });
    this.options.logger.info({ peer: node }, 'cluster node joined');
    this.emit({ node, up: true });
  }

  private leave(node: string, why: Departure): void {
    if (!this.seen.delete(node)) return;
    this.options.logger.warn({ peer: node, why }, 'cluster node gone');
    this.emit({ node, up: false, why });
  }

  /** Calls the resume listeners; after a stall, `caughtUp` waits for what they return. */
  private resumed(stalled = false): void {
    this.resumedAt = performance.now();
    const checks = this.notify(this.resumeListeners, 'membership resume listener failed');
    if (!stalled) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.nodeTimeoutMs)));
    const done: Promise<void> = Promise.race([Promise.allSettled(checks), limit]).then(() => {
      clearTimeout(timer);
      if (this.catchingUp === done) this.catchingUp = null;
    });
    this.catchingUp = done;
  }

  /** Calls each listener; returns what they return (a listener that throws is logged). */
  private notify(listeners: ReadonlySet<() => void | Promise<void>>, failed: string): unknown[] {
    const results: unknown[] = [];
    for (const listener of listeners) {
      try {
        results.push(listener());
      } catch (err) {
        this.options.logger.error({ err: (err as Error).message }, failed);
      }
    }
    return results;
  }

  private emit(change: MembershipChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.options.logger.error(
          { err: (err as Error).message, peer: change.node },
          'membership listener failed',
        );
      }
    }
  }
}

import { randomUUID } from 'node:crypto';
import { type ClusterNode, NoHolderError, NodeTimeoutError } from '#broker/cluster';
import { type KV, type KvEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { OrphanSessions, publishWill } from './orphan-sessions.js';
import { handedStateOf } from '../session-lifecycle.js';
import { type Session } from '../mqtt-session.js';
import { type Claimed, SessionBucket } from './session-bucket.js';
import { SessionLeases } from './session-leases.js';
import { SessionWrites } from './session-writes.js';
import { type Claim, type Persisted, type SessionDirectory } from '../session-directory.js';
import { EMPTY_STATE, type SessionState, type WillRecord } from '../session-state.js';
import {
  carriedOf,
  decodeWill,
  isConflict,
  keyOf,
  packetIdsOf,
  parseRecord,
  type SessionRecord,
  stateOf,
} from './session-record.js';

/** The node-addressed request that asks the node holding a client id to let go. */
const TAKEOVER = 'mqtt.takeover';
/** What a takeover request's race yields when the holder left the live set first. */
const DEPARTED: unique symbol = Symbol('departed');

/** How often a claim reads again after its compare-and-swap met a write of the node letting go. */
const CLAIM_ATTEMPTS = 3;

interface TakeoverRequest {
  readonly clientId: string;
  readonly clean: boolean;
  /** The claiming node (for the log; a request without it is from an older build). */
  readonly node?: string;
}

/** What letting go yields: the session's state, and a will that is due once the claim wins. */
interface Released {
  readonly state: SessionState | null;
  readonly will: WillRecord | null;
  /** The session is this process's own (a reconnect here): its live state is newer than its record. */
  readonly here?: boolean;
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
  private readonly bucket: SessionBucket;
  /** Claims under way here: a takeover by another node meanwhile makes them lose. */
  private readonly claiming = new Map<string, { superseded: boolean }>();
  private offMembership: (() => void) | null = null;
  private readonly orphans: OrphanSessions;
  /** Client ids being handed to another node: their session ends here without deleting the record. */
  private readonly handingOver = new Set<string>();
  private readonly writes: SessionWrites;
  private readonly leases: SessionLeases;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {
    this.bucket = new SessionBucket(node, log);
    this.orphans = new OrphanSessions(node, broker, this.bucket, log);
    this.writes = new SessionWrites(broker, this.bucket, this.handingOver, log);
    this.leases = new SessionLeases(node, this.bucket, this.writes, this.orphans, this.claiming, log);
  }

  async start(): Promise<void> {
    await this.bucket.open();
    await this.leases.start();
    this.broker.directory = this;
    this.node.serve(TAKEOVER, (body) => this.takeover(body as TakeoverRequest));
    this.offMembership = this.node.membership.onChange((change) => {
      if (!change.up) void this.orphans.adoptFrom(change.node);
    });
  }

  /** Shutdown: no orphan's timer fires any more (the others adopt them when this node has left). */
  stop(): void {
    this.leases.stop();
    this.orphans.stop();
    this.offMembership?.();
    this.broker.directory = null;
  }

  async claim(
    clientId: string,
    clean: boolean,
    expirySec: number,
    will: WillRecord | null,
    keepAliveSec: number,
  ): Promise<Claim> {
    const kv = this.bucket.sessions;
    const key = keyOf(clientId);
    if (kv === null || key === null) return { state: null };
    const claimed: Claimed = { nonce: randomUUID(), keepAliveSec };
    const pending = { superseded: false };
    this.claiming.set(clientId, pending);
    try {
      return await this.claimAs(kv, key, clientId, claimed, pending, clean, expirySec, will);
    } finally {
      if (this.claiming.get(clientId) === pending) this.claiming.delete(clientId);
    }
  }

  private async claimAs(
    kv: KV,
    key: string,
    clientId: string,
    claimed: Claimed,
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
      if (entry !== null && held !== null && released === null) {
        const outcome = await this.letGo(clientId, clean, held, entry.revision);
        if (outcome === 'unavailable') return 'unavailable';
        released = outcome;
      }
      let state = released?.state ?? null;
      try {
        // In the id's queue of record writes, so that no write of this node's own runs beside the claim:
        // none is overtaken by it (answered as a conflict that this node's own hand caused, it would
        // count as written though the claim wrote over it), and a session held here is written as it is
        // now (a QoS 2 stage its last write carried), at the revision this node's own writes left.
        const revision = await this.bucket.run(clientId, async () => {
          const here = released?.here === true && !clean ? this.broker.sessions.get(clientId) : undefined;
          if (here !== undefined) state = handedStateOf(here);
          const record = this.bucket.recordOf(claimed, { ...EMPTY_STATE, ...state, expirySec }, will);
          // Indexed before the record is taken: a crash between the two still leaves the record findable.
          await this.bucket.index?.put(`${this.node.nodeId}.${key}`, '');
          const latest = here === undefined ? 0 : (this.bucket.revisions.get(clientId) ?? 0);
          const written =
            entry !== null && entry.operation === 'PUT'
              ? await kv.update(key, record, Math.max(entry.revision, latest))
              : await kv.create(key, record);
          // Another node took the id over while our write was being answered (its takeover request came
          // in before our acknowledgement was read): its claim stands, ours does not.
          if (pending.superseded) return null;
          this.bucket.revisions.set(clientId, written);
          this.bucket.claims.set(clientId, claimed);
          return written;
        });
        if (revision === null) return 'lost';
        // Won: the old holder's due will goes out now, once; a clean start ends what the stream kept for it.
        if (released !== null && released.will !== null) publishWill(this.broker, released.will);
        if (clean && held !== null) this.broker.queues?.discard(clientId, held.subscriptions);
        if (held !== null && held.node !== this.node.nodeId) {
          this.bucket.unindex(held.node, key);
          this.log.info(
            { clientId, from: held.node, revision },
            'mqtt: session taken over from another node',
          );
        }
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
    this.bucket.enqueue(clientId, async () => {
      const revision = this.bucket.revisions.get(clientId);
      const key = keyOf(clientId);
      if (revision === undefined || key === null || this.broker.sessions.has(clientId)) return;
      this.bucket.revisions.delete(clientId);
      this.bucket.claims.delete(clientId);
      await this.bucket.deleteRecord(key, revision);
    });
  }

  changed(session: Session): void {
    this.writes.changed(session);
  }

  persisted(session: Session): Promise<Persisted> {
    return this.writes.persisted(session);
  }

  ended(session: Session): void {
    this.writes.ended(session);
  }

  verified(): Promise<void> | null {
    return this.node.membership.caughtUp();
  }

  /**
   * The node holding the record lets go: asked when it is live; when it is gone (dead, confirmed by the
   * bucket, or an earlier process of ours), its record decides, and its will is due only when this
   * claim's clean start ends the session (a resume is the client back): published once the claim won.
   */
  private async letGo(
    clientId: string,
    clean: boolean,
    held: SessionRecord,
    revision: number,
  ): Promise<Released | 'unavailable'> {
    const mine = held.node === this.node.nodeId;
    if (this.orphans.releaseIfOrphan(clientId, clean, revision) !== null)
      return { state: clean ? null : stateOf(held), will: null };
    if (mine && held.incarnation === this.node.incarnation)
      return { state: clean ? null : stateOf(held), will: null, here: true };
    if (!mine) {
      const asked = await this.askToLetGo(clientId, clean, held);
      if (asked !== 'record') return asked;
    }
    // The client is back (this claim is its CONNECT): as with an adopted orphan, its will goes out only
    // when its clean start ends the session, not at once for a will without delay.
    const will = decodeWill(held.will);
    return { state: clean ? null : stateOf(held), will: clean ? will : null };
  }

  /**
   * Asks the node holding the record to let go; 'record' when it is gone, so that its record decides: dead
   * by this node's count and the bucket's, or nobody listening for it. A holder cut off from NATS still
   * looks subscribed to the server, so a request to it runs to the time limit: one this node already
   * counts gone is not asked, and a wait ends as soon as it does (the holder let go of its leases before).
   */
  private async askToLetGo(
    clientId: string,
    clean: boolean,
    held: SessionRecord,
    askedBefore = false,
  ): Promise<Released | 'record' | 'unavailable'> {
    const { membership } = this.node;
    const gone = () => {
      this.log.warn({ clientId, node: held.node }, 'mqtt: the holding node is gone, its record decides');
      return 'record' as const;
    };
    if (!membership.isLive(held.node) && (await membership.confirmDead(held.node, held.incarnation)))
      return gone();
    const departure = membership.departure(held.node);
    const asking = this.node.request<SessionState | null>(held.node, TAKEOVER, {
      clientId,
      clean,
      node: this.node.nodeId,
    } satisfies TakeoverRequest);
    try {
      const first = await Promise.race([asking, departure.left.then((): typeof DEPARTED => DEPARTED)]);
      if (first === DEPARTED && (await membership.confirmDead(held.node, held.incarnation))) return gone();
      // Counted gone here but not by the bucket (its new incarnation, or this node's watch behind): the
      // holder may still answer, within the request's own limit.
      const answer: SessionState | null = first === DEPARTED ? await asking : first;
      const state =
        answer === null
          ? null
          : {
              expirySec: answer.expirySec,
              subscriptions: answer.subscriptions,
              releasing: packetIdsOf(answer.releasing),
              receiving: packetIdsOf(answer.receiving),
              lastPacketId: packetIdsOf([answer.lastPacketId])[0] ?? 0,
              ...carriedOf(answer),
            };
      // A holder that has no such session any more (it let go for a claim whose write then failed, with
      // JetStream recovering) leaves its record to decide: what it wrote there last is not lost.
      return { state: state ?? (clean ? null : stateOf(held)), will: null };
    } catch (err) {
      if (err instanceof NoHolderError) {
        // Just after this node's own NATS outage (a NATS restart: every node reconnects), a live holder's
        // subscriptions may not be back yet: its silence is not its death, and taking the record now
        // would leave its connection served until its check after the return. Refused for now (0x88: the
        // client tries again); once the holder's beats stop for `nodeTimeoutMs`, the record decides.
        if (membership.isLive(held.node) && membership.reconnectedRecently()) {
          this.log.warn(
            { clientId, node: held.node },
            'mqtt: the holding node does not listen yet after a NATS outage, the claim waits',
          );
          return 'unavailable';
        }
        // Its beats seen a moment ago: its connection to NATS may look open to it while nothing passes
        // (its server gone behind a proxy), and it serves until its unconfirmed beats hold it back. The
        // claim waits for that (a few heartbeats at most) and asks again: it may be back meanwhile.
        const lapseMs = membership.leasesLapseIn(held.node);
        if (lapseMs > 0) {
          if (askedBefore) return 'unavailable';
          await new Promise((resolve) => setTimeout(resolve, lapseMs));
          return this.askToLetGo(clientId, clean, held, true);
        }
        // Nobody listens for it (a process gone with its sockets): the record decides at once. A holder
        // still running finds the record moved when it is back, and lets go.
        this.log.warn(
          { clientId, node: held.node },
          'mqtt: the holding node does not listen, its record decides',
        );
        return 'record';
      }
      if (!(err instanceof NodeTimeoutError)) throw err;
      // Slow or paused is not dead: only a death the bucket confirms lets the record decide.
      if (!(await membership.confirmDead(held.node, held.incarnation))) return 'unavailable';
      return gone();
    } finally {
      departure.cancel();
    }
  }

  /**
   * On the node holding `clientId`: let go of it for the node asking. Its record still names this node
   * until the claimer's write lands; if that never comes, the session waits here as an orphan (see
   * `OrphanSessions.awaitClaim`), so that its will and expiry still happen.
   */
  private takeover(request: TakeoverRequest): SessionState | null {
    const clientId = String(request?.clientId);
    const clean = request?.clean === true;
    const claiming = this.claiming.get(clientId);
    if (claiming !== undefined) claiming.superseded = true;
    const windowSec = Math.ceil((CLAIM_ATTEMPTS * this.node.config.requestTimeoutMs) / 1000);
    const orphan = this.orphans.handOver(clientId, clean, windowSec);
    if (orphan !== null) return clean ? null : stateOf(orphan);
    const session = this.broker.sessions.get(clientId);
    const revision = this.bucket.revisions.get(clientId);
    const claimed = this.bucket.claims.get(clientId);
    this.log.info(
      {
        clientId,
        to: typeof request?.node === 'string' ? request.node : null,
        held: session !== undefined,
        connected: session !== undefined && session.owner !== null,
        claiming: claiming !== undefined,
      },
      'mqtt: session handed to a claim on another node',
    );
    // Before the takeover ends the connection: its will, which is due later unless the claim lands.
    const will = session?.will ?? null;
    const expirySec = session?.expirySec ?? 0;
    let state: SessionState | null;
    this.handingOver.add(clientId);
    try {
      state = this.broker.lifecycle.handOver(clientId, clean);
    } finally {
      this.handingOver.delete(clientId);
      this.bucket.revisions.delete(clientId);
      this.bucket.claims.delete(clientId);
    }
    if (revision === undefined || claimed === undefined) return state;
    // A will without delay went out with the connection, as did every will on a clean start.
    const waiting = !clean && will !== null && Math.min(will.delaySec, expirySec) > 0 ? will : null;
    const kept = parseRecord(Buffer.from(this.bucket.recordOf(claimed, state ?? EMPTY_STATE, waiting)));
    if (kept !== null) this.orphans.awaitClaim(clientId, kept, revision, windowSec);
    return state;
  }

  /**
   * At start, once the bus bridge is up (a will goes out to every node): records of nodes that are not
   * live, and of an earlier process under this node id, are adopted.
   */
  sweep(): Promise<void> {
    return this.orphans.sweep();
  }
}

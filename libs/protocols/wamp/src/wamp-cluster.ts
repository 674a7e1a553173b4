import { createHash } from 'node:crypto';
import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { E } from './errors.js';
import { type Args, CALL, type Dict, ERROR, INTERRUPT, INVOCATION, type Kwargs, RESULT } from './messages.js';
import { Permissions } from './permissions.js';
import { type Precedence, type RemoteDealer } from './remote.js';
import { type Router } from './router.js';
import { type PendingCall, Session } from './session.js';
import { UriIndex } from './uri-index.js';
import { type MatchPolicy } from './uri.js';

/** The node-addressed service every node listens on for WAMP calls, cancels and answers. */
const SERVICE = 'wamp';

/** A registration as the cluster records it: which node takes its calls, and how its callees share it. */
interface RegistrationRecord {
  readonly node: string;
  /** The process of that node that wrote it: a record of an earlier process under the id is stale. */
  readonly incarnation: string;
  readonly invoke: string;
  readonly realm: string;
  readonly match: MatchPolicy;
  readonly uri: string;
}

interface Known extends RegistrationRecord {
  readonly key: string;
  readonly revision: number;
}

interface CallerInfo {
  readonly session: number;
  readonly authid: string;
  readonly authrole: string;
}

type Wire =
  | {
      readonly k: 'call';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly uri: string;
      readonly options: Dict;
      readonly args?: Args;
      readonly kwargs?: Kwargs;
      readonly caller: CallerInfo;
    }
  | {
      readonly k: 'cancel';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly mode: string;
    }
  | {
      readonly k: 'answer';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly message: unknown[];
    };

/** Callers on other nodes passed their own realm's permission check there; here they may call anything. */
const ANY = new Permissions([
  { uri: '', match: 'prefix', allow: ['call', 'register', 'publish', 'subscribe'] },
]);
const ADVANCED = {
  caller: { features: { call_canceling: true, progressive_call_results: true } },
  callee: { features: { call_canceling: true, progressive_call_results: true } },
};
const NOBODY = { send: () => undefined };

/** KV keys hold [-/_=.a-zA-Z0-9] and must stay short: a hash of the realm, the match policy and the URI. */
function keyOf(realm: string, match: MatchPolicy, uri: string): string {
  return createHash('sha256').update(`${realm}\u0000${match}\u0000${uri}`).digest('base64url');
}

function isRecord(value: unknown): value is RegistrationRecord {
  const r = value as RegistrationRecord;
  return (
    typeof r?.node === 'string' &&
    typeof r.incarnation === 'string' &&
    typeof r.invoke === 'string' &&
    typeof r.realm === 'string' &&
    typeof r.uri === 'string' &&
    (r.match === 'exact' || r.match === 'prefix' || r.match === 'wildcard')
  );
}

/** Another node, as the callee of the calls this node sends it in one realm. */
class NodeStandIn extends Session {
  constructor(
    realm: string,
    readonly node: string,
    private readonly cancel: (id: number, mode: string) => void,
  ) {
    super(
      0,
      realm,
      { authid: node, authrole: 'node', authmethod: 'cluster', authprovider: 'cluster' },
      ANY,
      ADVANCED,
      NOBODY,
    );
  }

  /** The dealer only INTERRUPTs a stand-in (cancel, timeout, caller gone): the node cancels on its side. */
  override send(message: readonly unknown[]): void {
    if (message[0] !== INTERRUPT) return;
    const options = (message[2] ?? {}) as Dict;
    this.cancel(message[1] as number, typeof options['mode'] === 'string' ? options['mode'] : 'killnowait');
  }
}

/** A caller on another node, as the caller of one call here; what the dealer sends it goes back there. */
class ForwardedCaller extends Session {
  constructor(
    realm: string,
    caller: CallerInfo,
    private readonly answer: (message: readonly unknown[]) => void,
  ) {
    super(
      caller.session,
      realm,
      { authid: caller.authid, authrole: caller.authrole, authmethod: 'cluster', authprovider: 'cluster' },
      ANY,
      ADVANCED,
      NOBODY,
    );
  }

  override send(message: readonly unknown[]): void {
    this.answer(message);
  }
}

/**
 * WAMP RPC across the nodes of a cluster. Registrations are recorded in a KV bucket (exclusive ones by
 * create-if-absent, so of two nodes racing for one URI one wins); every node caches the bucket through a
 * watch. A call to a procedure no local callee holds goes to the recording node as node-addressed
 * messages on NATS; that node picks the callee by its own invoke policy, and the RESULTs (progressive
 * ones too) and ERROR come back the same way. Cancel and the caller's timeout cross as INTERRUPTs. When a
 * node leaves the cluster, calls in flight to it get `wamp.error.canceled` at once, calls from it are
 * cancelled at their callees, and its records are deleted.
 */
export class WampCluster {
  private kv: KV | null = null;
  private readonly records = new Map<string, Known>();
  private readonly indexes = new Map<string, UriIndex<Known>>();
  private readonly standIns = new Map<string, NodeStandIn>();
  private readonly forwarded = new Map<string, ForwardedCaller>();
  private router: Router | null = null;
  private watch: BucketWatch | null = null;
  /** Set while a call from another node runs here: it is never sent on to a third node. */
  private inbound = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  async start(router: Router): Promise<void> {
    this.router = router;
    const kv = await this.node.bucket('wamp-registrations', { history: 1 });
    this.kv = kv;
    this.watch = await watchBucket(kv, (entry) => this.changed(entry), {
      log: this.log,
      what: 'wamp registrations',
      retryMs: 1000,
      loadTimeoutMs: 5000,
    });
    await this.watch.loaded;
    this.sweep();
    this.node.listen(SERVICE, (body) => this.receive(body as Wire));
    this.node.membership.onChange((change) => {
      if (!change.up) void this.nodeGone(change.node);
    });
    this.node.onConnection((connected) => {
      if (!connected) this.connectionLost();
      else this.watch?.restart();
    });
  }

  /**
   * At start: records of an earlier process under this node id, or of a node not live, or of a live
   * node's earlier incarnation, hold URIs nobody serves; they go.
   */
  private sweep(): void {
    const { membership } = this.node;
    for (const known of [...this.records.values()]) {
      const live =
        known.node !== this.node.nodeId &&
        membership.isLive(known.node) &&
        membership.incarnationOf(known.node) === known.incarnation;
      if (!live) this.deleteRecord(known);
    }
  }

  private deleteRecord(known: Known): void {
    this.kv?.delete(known.key, { previousSeq: known.revision }).catch(() => undefined);
  }

  stop(): void {
    this.watch?.stop();
  }

  /** The realm's port for its dealer. */
  remote(realm: string): RemoteDealer {
    return {
      route: (uri, local) => this.route(realm, uri, local),
      forward: (call, uri, options, args, kwargs) => this.forward(realm, call, uri, options, args, kwargs),
      claim: (match, uri, invoke) => this.claim(realm, match, uri, invoke),
      release: (match, uri) => this.release(realm, match, uri),
    };
  }

  private route(realm: string, uri: string, local: Precedence | undefined): Session | undefined {
    const index = this.indexes.get(realm);
    if (index === undefined || this.inbound) return undefined;
    for (const known of index.matching(uri)) {
      if (known.node === this.node.nodeId || !this.node.membership.isLive(known.node)) continue;
      if (local !== undefined && !outranks(known, local)) return undefined;
      return this.standIn(realm, known.node);
    }
    return undefined;
  }

  private standIn(realm: string, node: string): NodeStandIn {
    const key = `${node}\u0000${realm}`;
    let standIn = this.standIns.get(key);
    if (standIn === undefined) {
      standIn = new NodeStandIn(realm, node, (id, mode) =>
        this.node.post(node, SERVICE, {
          k: 'cancel',
          from: this.node.nodeId,
          realm,
          id,
          mode,
        } satisfies Wire),
      );
      this.standIns.set(key, standIn);
    }
    return standIn;
  }

  private forward(
    realm: string,
    call: PendingCall,
    uri: string,
    options: Dict,
    args: Args,
    kwargs: Kwargs,
  ): void {
    const standIn = call.callee as NodeStandIn;
    const { caller } = call;
    const forwardedOptions: Dict = {};
    if (options['receive_progress'] === true) forwardedOptions['receive_progress'] = true;
    if (options['disclose_me'] === true) forwardedOptions['disclose_me'] = true;
    const sent = this.node.post(standIn.node, SERVICE, {
      k: 'call',
      from: this.node.nodeId,
      realm,
      id: call.invocationRequest,
      uri,
      options: forwardedOptions,
      ...(args !== undefined && { args }),
      ...(kwargs !== undefined && { kwargs }),
      caller: { session: caller.id, authid: caller.identity.authid, authrole: caller.identity.authrole },
    } satisfies Wire);
    if (!sent) {
      const dealer = this.router?.existingRealm(realm)?.dealer;
      dealer?.error(
        standIn,
        INVOCATION,
        call.invocationRequest,
        {},
        E.canceled,
        [`the call could not be sent to node ${standIn.node} (NATS unreachable, or the call is too large)`],
        undefined,
      );
    }
  }

  private async claim(realm: string, match: MatchPolicy, uri: string, invoke: string): Promise<boolean> {
    const kv = this.kv;
    if (kv === null) return true;
    const key = keyOf(realm, match, uri);
    const mine: RegistrationRecord = {
      node: this.node.nodeId,
      incarnation: this.node.incarnation,
      invoke,
      realm,
      match,
      uri,
    };
    const record = JSON.stringify(mine);
    try {
      this.remember(key, mine, await kv.create(key, record));
      return true;
    } catch {
      // Held already: by us, by a dead node (taken over), shared alike, or exclusively by another node.
    }
    let entry;
    try {
      entry = await kv.get(key);
    } catch {
      return false;
    }
    if (entry === null || entry.operation !== 'PUT') return this.claimAgain(kv, key, mine);
    let held: unknown;
    try {
      held = entry.json<unknown>();
    } catch {
      held = null;
    }
    if (!isRecord(held)) return this.replace(kv, key, mine, entry.revision);
    if (held.node === this.node.nodeId && held.incarnation === this.node.incarnation) return true;
    const { membership } = this.node;
    // An earlier process of ours, or a node the bucket confirms gone: its record holds a URI nobody serves.
    const stale =
      held.node === this.node.nodeId ||
      ((!membership.isLive(held.node) || membership.incarnationOf(held.node) !== held.incarnation) &&
        (await membership.confirmDead(held.node, held.incarnation)));
    if (stale) return this.replace(kv, key, mine, entry.revision);
    return invoke !== 'single' && held.invoke === invoke;
  }

  /** A record nobody serves (a dead node's, an earlier process's, not ours at all): overwritten by CAS. */
  private async replace(kv: KV, key: string, mine: RegistrationRecord, revision: number): Promise<boolean> {
    try {
      this.remember(key, mine, await kv.update(key, JSON.stringify(mine), revision));
      return true;
    } catch {
      return false;
    }
  }

  /** The record went away between the create and the read: one more create decides. */
  private async claimAgain(kv: KV, key: string, mine: RegistrationRecord): Promise<boolean> {
    try {
      this.remember(key, mine, await kv.create(key, JSON.stringify(mine)));
      return true;
    } catch {
      this.log.debug(
        { realm: mine.realm, match: mine.match, uri: mine.uri },
        'wamp: registration contested across nodes',
      );
      return false;
    }
  }

  private release(realm: string, match: MatchPolicy, uri: string): void {
    const key = keyOf(realm, match, uri);
    const known = this.records.get(key);
    if (known === undefined || known.node !== this.node.nodeId || this.kv === null) return;
    this.kv.delete(key, { previousSeq: known.revision }).catch(() => undefined);
  }

  private remember(key: string, record: RegistrationRecord, revision: number): void {
    const known: Known = { ...record, key, revision };
    this.records.set(key, known);
    let index = this.indexes.get(record.realm);
    if (index === undefined) this.indexes.set(record.realm, (index = new UriIndex()));
    index.set(record.match, record.uri, known);
  }

  private forget(key: string): Known | undefined {
    const known = this.records.get(key);
    if (known === undefined) return undefined;
    this.records.delete(key);
    const index = this.indexes.get(known.realm);
    // Only if the index still holds this record (a newer one for the same URI replaced it otherwise).
    if (index?.get(known.match, known.uri) === known) index.delete(known.match, known.uri);
    return known;
  }

  private changed(entry: KvWatchEntry): void {
    if (entry.operation === 'PUT') {
      let record: unknown;
      try {
        record = entry.json<unknown>();
      } catch {
        record = null;
      }
      if (!isRecord(record)) {
        this.log.warn({ key: entry.key }, 'wamp: registration record that is not one ignored');
        return;
      }
      // A watch restarted replays entries this node may have moved past already.
      const known = this.records.get(entry.key);
      if (known !== undefined && known.revision > entry.revision) return;
      this.remember(entry.key, record, entry.revision);
      return;
    }
    const gone = this.forget(entry.key);
    if (gone !== undefined) this.reclaim(gone);
  }

  /** A record went (its node left, or unregistered): if callees here share it, this node takes it. */
  private reclaim(gone: Known): void {
    const realm = this.router?.existingRealm(gone.realm);
    const registration = realm?.dealer.registrations.find(gone.match, gone.uri);
    if (registration === undefined) return;
    this.claim(gone.realm, gone.match, gone.uri, registration.invoke).catch((err: unknown) =>
      this.log.warn({ err: (err as Error).message, uri: gone.uri }, 'wamp: registration not claimed again'),
    );
  }

  private receive(wire: Wire): void {
    if (
      typeof wire !== 'object' ||
      wire === null ||
      typeof wire.realm !== 'string' ||
      typeof wire.from !== 'string'
    ) {
      this.log.warn('wamp: cluster message without realm or node dropped');
      return;
    }
    try {
      if (wire.k === 'call') this.callHere(wire);
      else if (wire.k === 'cancel') this.cancelHere(wire);
      else if (wire.k === 'answer') this.answered(wire);
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, kind: wire.k, from: wire.from },
        'wamp: cluster message refused',
      );
    }
  }

  private callHere(wire: Extract<Wire, { k: 'call' }>): void {
    const answer = (message: readonly unknown[]): void => {
      const final =
        message[0] === ERROR || (message[0] === RESULT && (message[2] as Dict)?.['progress'] !== true);
      if (final) this.forwarded.delete(key);
      const answer = (body: readonly unknown[]): boolean =>
        this.node.post(wire.from, SERVICE, {
          k: 'answer',
          from: this.node.nodeId,
          realm: wire.realm,
          id: wire.id,
          message: [...body],
        } satisfies Wire);
      if (!answer(message)) {
        // Too large for NATS: the caller hears that rather than waiting for nothing.
        answer([ERROR, CALL, wire.id, {}, E.canceled, ['the result could not be sent across the cluster']]);
      }
    };
    const key = `${wire.from}\u0000${wire.realm}\u0000${wire.id}`;
    const realm = this.router?.existingRealm(wire.realm);
    const caller = new ForwardedCaller(wire.realm, wire.caller, answer);
    if (realm === undefined)
      return caller.error(CALL, wire.id, E.noSuchProcedure, `no realm ${wire.realm} here`);
    this.forwarded.set(key, caller);
    this.inbound = true;
    try {
      realm.dealer.call(caller, wire.id, wire.options, wire.uri, wire.args, wire.kwargs);
    } finally {
      this.inbound = false;
    }
  }

  private cancelHere(wire: Extract<Wire, { k: 'cancel' }>): void {
    const caller = this.forwarded.get(`${wire.from}\u0000${wire.realm}\u0000${wire.id}`);
    if (caller === undefined) return;
    this.router?.existingRealm(wire.realm)?.dealer.cancel(caller, wire.id, { mode: wire.mode });
  }

  private answered(wire: Extract<Wire, { k: 'answer' }>): void {
    const standIn = this.standIns.get(`${wire.from}\u0000${wire.realm}`);
    const dealer = this.router?.existingRealm(wire.realm)?.dealer;
    if (standIn === undefined || dealer === undefined || !Array.isArray(wire.message)) return;
    const [type] = wire.message;
    if (type === RESULT) {
      const [, , details, args, kwargs] = wire.message as [number, number, Dict, Args, Kwargs];
      dealer.yield(standIn, wire.id, { progress: details?.['progress'] === true }, args, kwargs);
    } else if (type === ERROR) {
      const [, , , details, error, args, kwargs] = wire.message as [
        number,
        number,
        number,
        Dict,
        string,
        Args,
        Kwargs,
      ];
      dealer.error(standIn, INVOCATION, wire.id, details ?? {}, error, args, kwargs);
    }
  }

  /** A node left: its calls fail now, calls it sent are cancelled at their callees, its records go. */
  private async nodeGone(node: string): Promise<void> {
    for (const standIn of this.standIns.values()) {
      // Stand-ins stay for the process's life: their invocation ids never repeat, so a late answer of a
      // node wrongly thought dead cannot match a newer call.
      if (standIn.node === node) this.failCalls(standIn, `node ${node} holding the callee left the cluster`);
    }
    for (const [key, caller] of this.forwarded) {
      if (!key.startsWith(`${node}\u0000`)) continue;
      this.forwarded.delete(key);
      this.router?.existingRealm(caller.realm)?.dealer.leave(caller);
    }
    // Freeing its URIs is for a node that is dead by the bucket too, not only by this node's view.
    if (!(await this.node.membership.confirmDead(node))) return;
    for (const known of [...this.records.values()]) {
      if (known.node === node) this.deleteRecord(known);
    }
  }

  /**
   * NATS went away: calls sent to other nodes and calls received from them may have lost their messages;
   * they end now (canceled) rather than wait for answers that may never come.
   */
  private connectionLost(): void {
    for (const standIn of this.standIns.values())
      this.failCalls(standIn, 'this node lost NATS during the call');
    for (const [key, caller] of this.forwarded) {
      this.forwarded.delete(key);
      this.router?.existingRealm(caller.realm)?.dealer.leave(caller);
    }
  }

  private failCalls(standIn: NodeStandIn, why: string): void {
    const dealer = this.router?.existingRealm(standIn.realm)?.dealer;
    for (const id of [...standIn.invocations.keys()]) {
      dealer?.error(standIn, INVOCATION, id, {}, E.canceled, [why], undefined);
    }
  }
}

/** Whether a remote registration takes a call before the best local one (exact, longest prefix, wildcard). */
function outranks(remote: Precedence, local: Precedence): boolean {
  const rank = { exact: 3, prefix: 2, wildcard: 1 } as const;
  if (rank[remote.match] !== rank[local.match]) return rank[remote.match] > rank[local.match];
  return remote.match === 'prefix' && remote.uri.length > local.uri.length;
}

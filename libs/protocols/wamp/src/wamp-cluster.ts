import { type ClusterNode } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { E } from './errors.js';
import { type Args, CALL, type Dict, ERROR, INTERRUPT, INVOCATION, type Kwargs, RESULT } from './messages.js';
import { Permissions } from './permissions.js';
import { type RemoteDealer } from './remote.js';
import { type Router } from './router.js';
import { type PendingCall, Session } from './session.js';
import { UriIndex } from './uri-index.js';
import { type MatchPolicy } from './uri.js';

/** The node-addressed service every node listens on for WAMP calls, cancels and answers. */
const SERVICE = 'wamp';

/** A registration as the cluster records it: which node takes its calls, and how its callees share it. */
interface RegistrationRecord {
  readonly node: string;
  readonly invoke: string;
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

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** KV keys hold [-/_=.a-zA-Z0-9]: the realm and URI are base64url, the match policy a word. */
function keyOf(realm: string, match: MatchPolicy, uri: string): string {
  return `${b64(realm)}.${match}.${b64(uri)}`;
}

function parseKey(key: string): { realm: string; match: MatchPolicy; uri: string } | null {
  const [realm, match, uri] = key.split('.');
  if (realm === undefined || uri === undefined) return null;
  if (match !== 'exact' && match !== 'prefix' && match !== 'wildcard') return null;
  return {
    realm: Buffer.from(realm, 'base64url').toString('utf8'),
    match,
    uri: Buffer.from(uri, 'base64url').toString('utf8'),
  };
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
  private stopped = false;
  /** Set while a call from another node runs here: it is never sent on to a third node. */
  private inbound = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  async start(router: Router): Promise<void> {
    this.router = router;
    this.kv = await this.node.bucket('wamp-registrations', { history: 1 });
    await this.watch(this.kv);
    this.node.listen(SERVICE, (body) => this.receive(body as Wire));
    this.node.membership.onChange((change) => {
      if (!change.up) this.nodeGone(change.node);
    });
  }

  stop(): void {
    this.stopped = true;
  }

  /** The realm's port for its dealer. */
  remote(realm: string): RemoteDealer {
    return {
      route: (uri) => this.route(realm, uri),
      forward: (call, uri, options, args, kwargs) => this.forward(realm, call, uri, options, args, kwargs),
      claim: (match, uri, invoke) => this.claim(realm, match, uri, invoke),
      release: (match, uri) => this.release(realm, match, uri),
    };
  }

  private route(realm: string, uri: string): Session | undefined {
    const index = this.indexes.get(realm);
    if (index === undefined || this.inbound) return undefined;
    for (const known of index.matching(uri)) {
      if (known.node === this.node.nodeId || !this.node.membership.isLive(known.node)) continue;
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
    this.node.post(standIn.node, SERVICE, {
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
  }

  private async claim(realm: string, match: MatchPolicy, uri: string, invoke: string): Promise<boolean> {
    const kv = this.kv;
    if (kv === null) return true;
    const key = keyOf(realm, match, uri);
    const record = JSON.stringify({ node: this.node.nodeId, invoke } satisfies RegistrationRecord);
    try {
      this.remember(key, { node: this.node.nodeId, invoke }, await kv.create(key, record));
      return true;
    } catch {
      // Held already: by us, by a dead node (taken over), shared alike, or exclusively by another node.
    }
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== 'PUT')
      return this.claimAgain(kv, key, record, realm, match, uri, invoke);
    const held = entry.json<RegistrationRecord>();
    if (held.node === this.node.nodeId) return true;
    if (!this.node.membership.isLive(held.node)) {
      try {
        this.remember(key, { node: this.node.nodeId, invoke }, await kv.update(key, record, entry.revision));
        return true;
      } catch {
        return false;
      }
    }
    return invoke !== 'single' && held.invoke === invoke;
  }

  /** The record went away between the create and the read: one more create decides. */
  private async claimAgain(
    kv: KV,
    key: string,
    record: string,
    realm: string,
    match: MatchPolicy,
    uri: string,
    invoke: string,
  ): Promise<boolean> {
    try {
      this.remember(key, { node: this.node.nodeId, invoke }, await kv.create(key, record));
      return true;
    } catch {
      this.log.debug({ realm, match, uri }, 'wamp: registration contested across nodes');
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
    const parsed = parseKey(key);
    if (parsed === null) return;
    const known: Known = { ...record, key, revision };
    this.records.set(key, known);
    let index = this.indexes.get(parsed.realm);
    if (index === undefined) this.indexes.set(parsed.realm, (index = new UriIndex()));
    index.set(parsed.match, parsed.uri, known);
  }

  private forget(key: string): void {
    const parsed = parseKey(key);
    this.records.delete(key);
    if (parsed !== null) this.indexes.get(parsed.realm)?.delete(parsed.match, parsed.uri);
  }

  private async watch(kv: KV): Promise<void> {
    const watcher = await kv.watch();
    void (async () => {
      for await (const entry of watcher) this.changed(entry);
    })().then(
      () => this.rewatch(kv),
      (err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'wamp: registration watch failed');
        this.rewatch(kv);
      },
    );
  }

  private rewatch(kv: KV): void {
    if (this.stopped) return;
    setTimeout(() => void this.watch(kv).catch(() => this.rewatch(kv)), 1000).unref();
  }

  private changed(entry: KvWatchEntry): void {
    if (entry.operation === 'PUT') {
      let record: RegistrationRecord;
      try {
        record = entry.json<RegistrationRecord>();
      } catch {
        this.log.warn({ key: entry.key }, 'wamp: registration record that is not JSON ignored');
        return;
      }
      if (typeof record?.node !== 'string' || typeof record.invoke !== 'string') return;
      this.remember(entry.key, record, entry.revision);
      return;
    }
    this.forget(entry.key);
    this.reclaim(entry.key);
  }

  /** A record went (its node left, or unregistered): if callees here share it, this node takes it. */
  private reclaim(key: string): void {
    const parsed = parseKey(key);
    const realm = parsed === null ? undefined : this.router?.existingRealm(parsed.realm);
    if (parsed === null || realm === undefined) return;
    const registration = realm.dealer.registrations.find(parsed.match, parsed.uri);
    if (registration === undefined) return;
    void this.claim(parsed.realm, parsed.match, parsed.uri, registration.invoke);
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
      this.node.post(wire.from, SERVICE, {
        k: 'answer',
        from: this.node.nodeId,
        realm: wire.realm,
        id: wire.id,
        message: [...message],
      } satisfies Wire);
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
  private nodeGone(node: string): void {
    for (const [key, standIn] of this.standIns) {
      if (standIn.node !== node) continue;
      const dealer = this.router?.existingRealm(standIn.realm)?.dealer;
      for (const id of [...standIn.invocations.keys()]) {
        dealer?.error(
          standIn,
          INVOCATION,
          id,
          {},
          E.canceled,
          [`node ${node} holding the callee left the cluster`],
          undefined,
        );
      }
      this.standIns.delete(key);
    }
    for (const [key, caller] of this.forwarded) {
      if (!key.startsWith(`${node}\u0000`)) continue;
      this.forwarded.delete(key);
      this.router?.existingRealm(caller.realm)?.dealer.leave(caller);
    }
    for (const known of [...this.records.values()]) {
      if (known.node !== node || this.kv === null) continue;
      this.kv.delete(known.key, { previousSeq: known.revision }).catch(() => undefined);
    }
  }
}

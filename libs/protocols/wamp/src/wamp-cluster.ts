import { type ClusterNode } from '#broker/cluster';
import { type Logger } from 'pino';
import { ClusterRegistrations, type Known } from './cluster-registrations.js';
import { ForwardedCaller, NodeStandIn } from './node-stand-in.js';
import { type Wire } from './cluster-wire.js';
import { E } from './errors.js';
import { type Args, CALL, type Dict, ERROR, INVOCATION, type Kwargs, RESULT } from './messages.js';
import { type Precedence, type RemoteDealer } from './remote.js';
import { type Router } from './router.js';
import { type PendingCall, type Session } from './wamp-session.js';

/** The node-addressed service every node listens on for WAMP calls, cancels and answers. */
const SERVICE = 'wamp';
/** How soon a release the bucket did not take is tried again. */
const RELEASE_RETRY_MS = 1000;

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
  private readonly registrations: ClusterRegistrations;
  private readonly standIns = new Map<string, NodeStandIn>();
  private readonly forwarded = new Map<string, ForwardedCaller>();
  private router: Router | null = null;
  /** Set while a call from another node runs here: it is never sent on to a third node. */
  private inbound = false;
  /** A pass over this node's records of URIs nobody here serves, when one is due. */
  private releasing: NodeJS.Timeout | null = null;
  private offResume: (() => void) | null = null;
  private offLeaseLost: (() => void) | null = null;
  /** Lets this node's callees go (see `start`). */
  private letCalleesGo: () => void = () => undefined;
  /** Set from a lost lease until this node's heartbeats are written again: the bucket takes no claim. */
  private cutOff = false;
  private stopped = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {
    this.registrations = new ClusterRegistrations(node, log, (gone) => this.reclaim(gone));
  }

  /**
   * `letCalleesGo` is called when this node may soon be counted dead by the others (its heartbeats
   * unwritten: cut off from NATS, or NATS away): they will free its registrations, so its callees are
   * let go, to register again on a node the cluster can reach, as MQTT sessions are let go then. A
   * REGISTER arriving while it is so cut off lets its session go too.
   */
  async start(router: Router, letCalleesGo: () => void): Promise<void> {
    this.router = router;
    this.letCalleesGo = letCalleesGo;
    await this.registrations.start();
    this.node.listen(SERVICE, (body) => this.receive(body as Wire));
    this.node.membership.onChange((change) => {
      if (!change.up) void this.nodeGone(change.node);
    });
    this.node.onConnection((connected) => {
      if (!connected) this.connectionLost();
      else this.registrations.restartWatch();
    });
    // A release lost while this node was stalled or away from NATS is made again when it is back.
    this.offResume = this.node.membership.onResume(() => {
      this.cutOff = false;
      this.releaseLater(0);
    });
    this.offLeaseLost = this.node.membership.onLeaseLost(() => {
      this.cutOff = true;
      letCalleesGo();
    });
  }

  /**
   * Deletes, after `delayMs`, this node's records of URIs no callee here holds (a release the bucket
   * did not take would leave the URI held by a live node, so no callee elsewhere could register it);
   * tried again every second until the bucket takes them.
   */
  private releaseLater(delayMs = RELEASE_RETRY_MS): void {
    // One pass at a time; none once stopped.
    if (this.releasing !== null || this.stopped) return;
    this.releasing = setTimeout(() => {
      void this.registrations
        .releaseUnserved(
          (known) =>
            this.router?.existingRealm(known.realm)?.dealer.registrations.find(known.match, known.uri) !==
            undefined,
        )
        .then((done) => {
          this.releasing = null;
          if (!done) this.releaseLater();
        });
    }, delayMs);
    this.releasing.unref();
  }

  stop(): void {
    this.registrations.stop();
    this.offResume?.();
    this.offResume = null;
    this.offLeaseLost?.();
    this.offLeaseLost = null;
    if (this.releasing !== null) clearTimeout(this.releasing);
    this.stopped = true;
  }

  /** The realm's port for its dealer. */
  remote(realm: string): RemoteDealer {
    return {
      route: (uri, local) => this.route(realm, uri, local),
      forward: (call, uri, options, args, kwargs) => this.forward(realm, call, uri, options, args, kwargs),
      claim: (match, uri, invoke) =>
        this.cutOff ? this.refuseCutOff() : this.registrations.claim(realm, match, uri, invoke),
      release: (match, uri) =>
        void this.registrations.release(realm, match, uri).then((done) => {
          if (!done) this.releaseLater();
        }),
    };
  }

  /**
   * A REGISTER while this node is cut off: the session waiting for it is let go, after the message that
   * brought it has been handled, so that its client registers where the cluster can take the claim.
   */
  private refuseCutOff(): Promise<boolean> {
    return new Promise((resolve) =>
      setImmediate(() => {
        this.letCalleesGo();
        resolve(false);
      }),
    );
  }

  private route(realm: string, uri: string, local: Precedence | undefined): Session | undefined {
    if (this.inbound) return undefined;
    for (const known of this.registrations.matching(realm, uri)) {
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

  /** A record went (its node left, or unregistered): if callees here share it, this node takes it. */
  private reclaim(gone: Known): void {
    const realm = this.router?.existingRealm(gone.realm);
    const registration = realm?.dealer.registrations.find(gone.match, gone.uri);
    if (registration === undefined) return;
    this.registrations
      .claim(gone.realm, gone.match, gone.uri, registration.invoke)
      .catch((err: unknown) =>
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
    this.registrations.deleteNode(node);
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

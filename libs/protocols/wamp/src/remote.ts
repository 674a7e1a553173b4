import { type Args, type Dict, type Kwargs } from './messages.js';
import { type PendingCall, type Session } from './wamp-session.js';
import { type MatchPolicy } from './uri.js';

/**
 * How one realm reaches the registrations of other nodes (cluster mode; absent on a single node). The
 * core stays sans-IO: a call to another node's procedure is a call whose callee is a stand-in session
 * for that node; its answers come back through the dealer's `yield` and `error` as the stand-in's.
 */
/** A registration's place in the order a call tries them (exact, longest prefix, wildcard). */
export interface Precedence {
  readonly match: MatchPolicy;
  readonly uri: string;
}

export interface RemoteDealer {
  /**
   * The stand-in callee of the node whose registration takes calls to `uri`, or undefined; with `local`
   * (this node's best registration for it) only a remote one that outranks it.
   */
  route(uri: string, local?: Precedence): Session | undefined;
  /** Sends the call to the stand-in's node. */
  forward(call: PendingCall, uri: string, options: Dict, args: Args, kwargs: Kwargs): void;
  /**
   * Resolves true when this node may hold a new registration of `uri`: no other node holds it, or
   * another holds it shared with the same invoke policy. Exclusive registrations race through this.
   */
  claim(match: MatchPolicy, uri: string, invoke: string): Promise<boolean>;
  /** The last local callee of a registration left: other nodes no longer route here for it. */
  release(match: MatchPolicy, uri: string): void;
}

import { type EventPeerPort, type TimerHandle } from '#broker/kit';
import { type BusAccess } from './bus-access.js';
import { type Principal } from '#broker/handshake';
import { SequentialIds } from './ids.js';
import { type Dict, ERROR } from './messages.js';
import { type Permissions } from './permissions.js';

export interface Identity {
  readonly authid: string;
  readonly authrole: string;
  readonly authmethod: string;
  readonly authprovider: string;
  /** The verified credential behind this identity (token, password, stored key), when there is one. */
  readonly principal?: Principal;
}

/** What WELCOME and the meta API may say about an identity: never the credential's claims. */
export function publicIdentity({
  authid,
  authrole,
  authmethod,
  authprovider,
}: Identity): Omit<Identity, 'principal'> {
  return { authid, authrole, authmethod, authprovider };
}

/** A call in flight: owned by the caller (by its request ID) and the callee (by the INVOCATION's ID). */
export interface PendingCall {
  readonly caller: Session;
  readonly callRequest: number;
  readonly callee: Session;
  readonly invocationRequest: number;
  readonly wantsProgress: boolean;
  /** A `kill` cancel is waiting for the callee's answer. */
  killing: boolean;
  timer: TimerHandle | null;
}

/** Handles to what a session holds, so leaving can undo it without scanning the realm. */
export interface Held {
  readonly id: number;
}

type ClientRole = 'caller' | 'callee' | 'publisher' | 'subscriber';

/** One joined WAMP session: identity, permissions and the state it holds in its realm. */
export class Session {
  readonly subscriptions = new Map<number, Held>();
  readonly registrations = new Map<number, Held>();
  readonly calls = new Map<number, PendingCall>();
  readonly invocations = new Map<number, PendingCall>();
  readonly invocationIds = new SequentialIds();
  /** Set when the session left its realm: work that finishes later (a cluster claim) must not touch it. */
  left = false;
  /** REGISTERs waiting for their cluster claim: they count against the registration limit already. */
  pendingRegistrations = 0;

  constructor(
    readonly id: number,
    readonly realm: string,
    readonly identity: Identity,
    readonly permissions: Permissions,
    private readonly roles: Dict,
    /** Closing is the session protocol's business, not the session's. */
    private readonly peer: Omit<EventPeerPort, 'close'>,
    /** In the bus realm: the broker's authorization of its topics; null in other realms. */
    readonly busAccess: BusAccess | null = null,
  ) {}

  send(message: readonly unknown[]): void {
    this.peer.send(JSON.stringify(message));
  }

  /** An EVENT, serialized once for all its subscribers: what one that stopped reading can do without. */
  sendEvent(text: string): void {
    this.peer.sendEvent(text);
  }

  /** ERROR answering one of this session's requests, with a readable message as the only argument. */
  error(requestType: number, request: number, uri: string, message: string): void {
    this.send([ERROR, requestType, request, {}, uri, [message]]);
  }

  /** Whether the client announced an advanced feature for a role in its HELLO. */
  supports(role: ClientRole, feature: string): boolean {
    const entry = this.roles[role];
    if (typeof entry !== 'object' || entry === null) return false;
    const features = (entry as Dict)['features'];
    return typeof features === 'object' && features !== null && (features as Dict)[feature] === true;
  }

  /** The session's details as the meta API and `wamp.session.on_join` present them. */
  details(): Dict {
    return { session: this.id, realm: this.realm, ...publicIdentity(this.identity) };
  }
}

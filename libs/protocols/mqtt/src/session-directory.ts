import { type Session } from './mqtt-session.js';
import { type SessionState, type WillRecord } from './session-state.js';

/**
 * The outcome of a claim: the state the session had elsewhere (null: none); 'lost' when another CONNECT
 * won the id; 'unavailable' when the directory could not be asked (NATS away).
 */
export type Claim = { readonly state: SessionState | null } | 'lost' | 'unavailable';

/**
 * Where the sessions of a cluster live (absent on a single node): one owner per client id across the
 * nodes. The core asks it before a connection takes a client id and tells it what changes; it never
 * waits on it otherwise.
 */
/** What became of a session's latest changes (`SessionDirectory.persisted`). */
export type Persisted = 'written' | 'failed' | 'moved';

export interface SessionDirectory {
  /**
   * Makes this node the owner of `clientId`: the node holding it lets go (its connection gets DISCONNECT
   * 0x8E; on a clean start its session ends and a waiting will goes out, else its state comes here).
   * 'lost' when a CONNECT for the same id on another node won the race. `keepAliveSec` is the
   * connection's: a node that adopts the session when this one seems dead waits 1.5 times it before it
   * counts the connection lost.
   */
  claim(
    clientId: string,
    clean: boolean,
    expirySec: number,
    will: WillRecord | null,
    keepAliveSec: number,
  ): Promise<Claim>;
  /** The connection that claimed `clientId` went away before taking it. */
  abandon(clientId: string): void;
  /** The session's subscriptions, expiry or will changed. */
  changed(session: Session, will: WillRecord | null): void;
  /**
   * Resolves once what changed of the session so far was written to its record, or its write failed:
   * 'written' when the record holds it, 'failed' when NATS did not take the write (the session is still
   * this node's), 'moved' once another node holds the record (or the session ended here).
   */
  persisted(session: Session): Promise<Persisted>;
  /** The session ended here (expired, clean start, or handed to another node). */
  ended(session: Session): void;
  /**
   * Null while this node's hold on its sessions is known; after a stall or a NATS outage, resolves once
   * it has read its records back (a session that moved meanwhile is let go first). Until then nothing
   * queued here for a client goes out: it may be a session another node serves now.
   */
  verified(): Promise<void> | null;
}

import { type MqttConfig } from './mqtt-config.js';
import { type Clock } from '#broker/kit';
import { type MessageQueues } from './message-queues.js';
import { type SessionDirectory } from './session-directory.js';
import { type SessionState, type WillRecord } from './session-state.js';
import { releaseOnly, Session, type SessionOwner } from './mqtt-session.js';
import { type Subscription } from './subscription.js';

/** What of a session its record keeps, for any node to carry it on. */
export function stateOfSession(session: Session): SessionState {
  return {
    expirySec: session.expirySec,
    subscriptions: [...session.subscriptions.values()],
    releasing: session.releasing(),
    receiving: [...session.awaitingRelease],
    lastPacketId: session.lastPacketId,
  };
}

/**
 * What a node hands over when it lets a session go (a takeover answer, a fenced session's record), and
 * what its record says meanwhile: its state and what the stream gave it.
 */
export function handedStateOf(session: Session): SessionState {
  const state = stateOfSession(session);
  if (session.streamDelivered === null) return state;
  const received = session.receivedSequences(HANDED_RECEIVED);
  const unconfirmed = session.unconfirmedSequences();
  return {
    ...state,
    streamDelivered: Object.fromEntries(session.streamDelivered),
    streamReceived: received.map(([sequence]) => sequence),
    streamReceivedAt: received.map(([, storedMs]) => storedMs),
    ...(unconfirmed.length === 0 ? {} : { streamUnconfirmed: unconfirmed }),
  };
}

/** The received QoS 2 stream sequences a session hands over: beyond any window in flight. */
const HANDED_RECEIVED = 64;

/** The broker state a session's life touches (MqttBroker provides it). */
export interface SessionHost {
  readonly sessions: Map<string, Session>;
  readonly config: MqttConfig;
  readonly clock: Clock;
  readonly directory: SessionDirectory | null;
  readonly queues: MessageQueues | null;
  /** Forgets a session: subscriptions out of the trie, queue discarded, timers stopped. */
  endSession(session: Session, handedOver?: boolean): void;
  subscribe(session: Session, subscription: Subscription): void;
  presenceChanged(session: Session): void;
}

/** The will of a connection that ended: published by `publish`, after `delaySec` unless the session ends first. */
export interface PendingWill {
  readonly delaySec: number;
  publish(): void;
  /** What the cluster's directory keeps of it while it waits. */
  readonly record: WillRecord | null;
}

/** The owner of a session claimed for a connection that went away before it was accepted. */
const AWAY: SessionOwner = {
  sendPublish: () => false,
  sendPubrel: () => undefined,
  sendWindow: 0,
  takeOver: () => undefined,
  useAnotherServer: () => undefined,
  discarded: () => undefined,
};

export type Attached = { readonly session: Session; readonly present: boolean } | null;

/**
 * A session's whole life in one place (MQTT 4.1, 3.1.2.4, 3.1.3.2.2): attach a connection (taking over the
 * one holding the client id, clean start or resume), detach it (the will now or after its delay, then
 * the session's expiry), and end it. Timers come from the broker's Clock.
 */
export class SessionLifecycle {
  constructor(private readonly host: SessionHost) {}

  /**
   * A new connection for `clientId`. Null past `maxSessions` for a client id not held yet. Otherwise the
   * connection holding it is taken over (v5 DISCONNECT 0x8E); on a clean start the old session ends
   * (a will still waiting for its delay goes out now), else it is resumed and keeps its state.
   */
  attach(
    owner: SessionOwner,
    clientId: string,
    clean: boolean,
    expirySec: number,
    /** Cluster mode: the state the session had on the node it came from. */
    imported: SessionState | null = null,
  ): Attached {
    const { sessions, config } = this.host;
    if (!sessions.has(clientId) && sessions.size >= config.maxSessions) return null;
    sessions.get(clientId)?.owner?.takeOver();
    // Read after the takeover: a session that ended with the old connection is gone.
    let session = sessions.get(clientId);
    if (session !== undefined && clean) {
      this.end(session);
      session = undefined;
    }
    const present = session !== undefined || imported !== null;
    if (session === undefined) {
      session = new Session(clientId);
      sessions.set(clientId, session);
      // Before the subscriptions: their feeds start their cursors from what the session was given.
      for (const [durable, sequence] of Object.entries(imported?.streamDelivered ?? {}))
        session.delivered(durable, sequence);
      for (const [i, sequence] of (imported?.streamReceived ?? []).entries())
        session.received(sequence, 0, imported?.streamReceivedAt?.[i] ?? 0);
      for (const sequence of imported?.streamUnconfirmed ?? []) session.unconfirmed(sequence);
      for (const subscription of imported?.subscriptions ?? []) this.host.subscribe(session, subscription);
      for (const packetId of imported?.releasing ?? []) {
        session.inflight.set(packetId, releaseOnly(packetId));
        session.received(undefined, packetId);
      }
      for (const packetId of imported?.receiving ?? []) session.awaitingRelease.add(packetId);
      if (imported !== null) session.lastPacketId = (imported.lastPacketId + config.maxInflight) % 65535;
    }
    // A resumed session's delayed will and expiry are off: its client is back (3.1.3.2.2).
    session.clearTimers(this.host.clock);
    session.expirySec = expirySec;
    session.owner = owner;
    return { session, present };
  }

  /**
   * Cluster mode: a CONNECT took `clientId` over from another node, and its connection went away before
   * it was accepted. What it took stays here as a session whose client is away, until its expiry (with
   * no expiry it ends now), as if the connection had dropped right after its CONNACK, but without the
   * connection's will: it was never accepted. A session this node holds already is left as it is.
   */
  keepClaimed(clientId: string, clean: boolean, expirySec: number, imported: SessionState | null): void {
    if (this.host.sessions.has(clientId)) return;
    const attached = this.attach(AWAY, clientId, clean, expirySec, imported);
    if (attached === null) this.host.directory?.abandon(clientId);
    else this.detach(attached.session, AWAY, null);
  }

  /**
   * `owner`'s connection ended. The will goes out now, or after its delay (at most the session's expiry);
   * a session with no expiry ends now, else when its expiry passes (publishing a will still waiting).
   */
  detach(session: Session, owner: SessionOwner, will: PendingWill | null): void {
    if (session.owner !== owner) return;
    session.owner = null;
    this.host.queues?.detached(session);
    this.host.presenceChanged(session);
    const { clock } = this.host;
    if (will !== null) {
      const publish = (): void => {
        session.pendingWill = null;
        session.will = null;
        will.publish();
        // The cluster's record drops the will too, so no node that takes the session over sends it again.
        this.host.directory?.changed(session, null);
      };
      const delay = Math.min(will.delaySec, session.expirySec);
      if (delay === 0) publish();
      else {
        session.pendingWill = publish;
        session.willTimer = clock.after(delay * 1000, publish);
      }
    }
    if (session.expirySec === 0) return this.end(session);
    session.will = session.pendingWill === null ? null : (will?.record ?? null);
    this.host.directory?.changed(session, session.will);
    session.expiryTimer = clock.after(session.expirySec * 1000, () => this.end(session));
  }

  /** Ends a session: a will still waiting goes out first. */
  end(session: Session): void {
    session.pendingWill?.();
    this.host.endSession(session);
  }

  /**
   * An administrator discards the session of `clientId`: its connection, if it has one, gets DISCONNECT
   * 0x98 and closes; the session ends (subscriptions, queue and, in cluster mode, its record and stream
   * consumers gone; a will goes out, as when any session ends). False when there is none here.
   */
  discard(clientId: string): boolean {
    const session = this.host.sessions.get(clientId);
    if (session === undefined) return false;
    session.owner?.discarded();
    // A session that ended with its connection (no expiry) is gone already.
    if (this.host.sessions.get(clientId) === session) this.end(session);
    return true;
  }

  /**
   * Cluster mode, on the node holding `clientId` when another node takes it: the connection gets
   * DISCONNECT 0x8E. On a clean start the session ends here (a waiting will goes out); else it leaves
   * quietly (its client is back, so no will) and its state goes with it.
   */
  handOver(clientId: string, clean: boolean): SessionState | null {
    this.host.sessions.get(clientId)?.owner?.takeOver();
    const session = this.host.sessions.get(clientId);
    if (session === undefined) return null;
    if (clean) {
      this.end(session);
      return null;
    }
    const state = handedStateOf(session);
    session.clearTimers(this.host.clock);
    this.host.endSession(session, true);
    return state;
  }

  /** Shutdown: no timer of any session fires any more. */
  stopAll(): void {
    for (const session of this.host.sessions.values()) session.clearTimers(this.host.clock);
  }
}

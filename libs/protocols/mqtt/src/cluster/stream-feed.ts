import { createHash } from 'node:crypto';
import { type ConsumerMessages } from '@nats-io/jetstream';
import { type ConsumerCursor } from './consumer-cursor.js';
import { type MqttMessage } from '../message.js';
import { type Session } from '../mqtt-session.js';
import { type Subscription } from '../subscription.js';

/** A session's subscription that a feed serves. */
export interface Member {
  readonly session: Session;
  subscription: Subscription;
}

/**
 * A queued subscription on this node: its consumers, and the deliveries running while a client it
 * serves is here. A persistent session's subscription has a feed of its own; a shared group on a filter
 * has one feed per node, serving the group's members on that node in turn.
 */
export interface Feed {
  readonly key: string;
  readonly filter: string;
  /** Null for a session's own feed. */
  readonly group: string | null;
  readonly durables: readonly string[];
  /** By client id. */
  readonly members: Map<string, Member>;
  cursor: number;
  /** Set once its consumers exist: from then on its QoS 1/2 messages come only from the stream. */
  ready: boolean;
  /**
   * The feed while it opens: the stored messages routed to it meanwhile (to a group's feed, the bus
   * queue's share of this node). If its consumers were there before (a session resumed from another
   * node, a group with members elsewhere), the stream holds these too and they are dropped here; if they
   * were made now, after these were stored, these go out from here. Null once known.
   */
  held: MqttMessage[] | null;
  /** Settles once its consumers exist, or could not be made. */
  opened: Promise<void>;
  /** By consumer: what this node knows of its deliveries. */
  readonly cursors: Map<string, ConsumerCursor>;
  /** Failed attempts in a row to make or read its consumers. */
  failures: number;
  /** Its consumers are being read from: a second start waits for none. */
  starting: boolean;
  consuming: ConsumerMessages[];
}

/** The member the next message goes to: its connected members in turn; null when none is here. */
export function target(feed: Feed): Member | null {
  const members = [...feed.members.values()];
  for (let step = 0; step < members.length; step++) {
    const member = members[(feed.cursor + step) % members.length] as Member;
    if (member.session.owner === null) continue;
    feed.cursor = (feed.cursor + step + 1) % members.length;
    return member;
  }
  return null;
}

/**
 * QoS 1/2 subscriptions of persistent sessions outlive their node; a shared group's QoS 1/2 messages go
 * through the stream whatever its members' QoS and sessions, so every node serves the group alike.
 */
export function eligible(session: Session, subscription: Subscription): boolean {
  return subscription.group !== null || (session.expirySec > 0 && subscription.qos > 0);
}

/** A session's own subscription, or a shared group on a filter (one feed for all its members here). */
export function keyOf(clientId: string, subscription: Subscription): string {
  return subscription.group === null
    ? `${clientId}\u0000${subscription.raw}`
    : `\u0000${subscription.group}\u0000${subscription.filter}`;
}

/** A consumer name every node derives alike: [A-Za-z0-9_-], short. */
export function durableOf(key: string, index: number): string {
  return `mq_${createHash('sha256').update(`${key}\u0000${index}`).digest('base64url').slice(0, 32)}`;
}

/**
 * The contract every protocol module talks to. It deliberately says nothing about where subscriptions live:
 * the in-memory bus serves one process, the cluster's NATS bus (libs/cluster) several nodes.
 */

/** One published message. Handlers share the same object and payload, so they must treat both as read-only. */
export interface BusMessage {
  /** MQTT-style topic name: '/'-separated levels, no wildcards. */
  readonly topic: string;
  /**
   * A publisher may build it on first read (a getter), so a message nobody reads costs no
   * serialization: a handler that can tell it has nowhere to deliver should return before reading it.
   */
  readonly payload: Uint8Array;
  /** MIME type of the payload when the publisher knows it, e.g. 'application/json'. */
  readonly contentType?: string;
  /** Name of the module that published, e.g. 'mqtt' or 'chat.v1'; lets bridges skip their own echoes. */
  readonly origin: string;
  /** Subject of the publisher when authenticated; null or absent when anonymous or unknown. */
  readonly principal?: string | null;
  /**
   * In cluster mode, the id of the node it came from when that is another node; absent for messages
   * published in this process. A bridge skips its own echoes only when this is absent: the same origin
   * from another node is a message its local clients have not seen.
   */
  readonly node?: string;
  /**
   * The publishing module's own bits about the message (an integer from 0 to 254), carried as they are
   * across the nodes: only the module of its `origin` reads them (MQTT keeps there the QoS its publisher
   * gave and whether its node stored the message in the module's stream).
   */
  readonly flags?: number;
  /**
   * The publisher's own id within its module (an MQTT client id), when the module gives it: carried as
   * it is across the nodes, read only by the module of its `origin` (MQTT gives it while a trace
   * follows that client, so the trace sees where its messages are delivered on other nodes).
   */
  readonly sender?: string;
}

/**
 * Called synchronously during publish. Any callback fits (what it returns is ignored); an implementation
 * must not let a returned rejected promise go unhandled, since async handlers are assignable here. A
 * handler that passes messages on (a protocol's bridge to its clients) returns a `BusReach`: how many of
 * them it reached, which publish counts instead of one.
 */
export type BusHandler = (message: BusMessage) => unknown;

/** How many receivers a bridging handler passed a message on to (0: none of its clients wanted it). */
export interface BusReach {
  readonly reached: number;
}

export interface BusSubscription {
  /** Stops delivery to this subscription. Safe to call more than once and from inside a handler. */
  unsubscribe(): void;
}

export interface SubscribeOptions {
  /**
   * 'cluster' (the default): messages published on every node. 'node': messages published in this
   * process, plus those of other nodes that `attract` brings here. A bridge that routes by its own
   * subscriptions (MQTT's) subscribes '#' for the node and attracts its clients' filters, so other
   * nodes send it only what its clients want.
   */
  readonly reach?: 'cluster' | 'node';
}

export interface TopicBus {
  /**
   * Delivers the message to every subscription whose filter matches its topic and returns how many handlers
   * it was delivered to (a handler subscribed through two matching filters counts twice). A cross-process
   * implementation can only count the handlers it reached synchronously. Throws InvalidTopicError if the topic is not a valid topic name.
   */
  publish(message: BusMessage): number;
  /** Throws InvalidTopicError if the filter is not a valid topic filter. */
  subscribe(filter: string, handler: BusHandler, options?: SubscribeOptions): BusSubscription;
  /**
   * Brings messages matching `filter` that other nodes publish to this node's 'node'-reach
   * subscriptions, each message once however many attracted filters it matches. Reference counted:
   * each call needs its own unsubscribe. Nothing to do in a single process. Throws InvalidTopicError
   * if the filter is not a valid topic filter.
   */
  attract(filter: string): BusSubscription;
  /**
   * A queue: each message matching `filter`, published on any node, reaches one handler of all those
   * subscribed with the same `queue` and `filter` across the nodes (MQTT's shared subscriptions). Across
   * processes the delivery is asynchronous, the publishing node's own included. Throws
   * InvalidTopicError if the filter is not a valid topic filter.
   */
  share(queue: string, filter: string, handler: BusHandler): BusSubscription;
}

/** Nest injection token for the process-wide TopicBus. */
export const TOPIC_BUS = Symbol('TOPIC_BUS');

import type { BusHandler, BusMessage, BusReach, BusSubscription, SubscribeOptions, TopicBus } from './bus.js';
import { assertTopicFilter, assertTopicName } from './topic.js';

export interface InMemoryTopicBusOptions {
  /**
   * Receives what a handler threw (or its returned promise rejected with), so one faulty subscriber cannot
   * stop delivery to the others or crash the process. Errors are dropped when absent.
   */
  readonly onHandlerError?: (error: unknown, message: BusMessage) => void;
}

/** One filter level. Children, '+' and handler sets are created lazily because most nodes need few of them. */
interface TrieNode {
  readonly parent: TrieNode | undefined;
  /** Key in the parent's `children`, or undefined for the root and for the parent's '+' child. */
  readonly level: string | undefined;
  children: Map<string, TrieNode> | undefined;
  plus: TrieNode | undefined;
  /** Subscriptions whose filter ends at this node. */
  exact: Set<Entry> | undefined;
  /** Subscriptions whose filter is this node's path followed by '#'. */
  hash: Set<Entry> | undefined;
}

interface Entry {
  /** Increasing per subscribe; publish skips entries newer than itself, so subscribing mid-delivery is safe. */
  readonly id: number;
  readonly handler: BusHandler;
  readonly node: TrieNode;
  readonly isHash: boolean;
  active: boolean;
}

const DOLLAR = 0x24;

const NOTHING: BusSubscription = { unsubscribe: () => undefined };

function newNode(parent: TrieNode | undefined, level: string | undefined): TrieNode {
  return { parent, level, children: undefined, plus: undefined, exact: undefined, hash: undefined };
}

/**
 * Process-local TopicBus on a topic trie. A publish visits only the trie nodes whose path matches a prefix of
 * the topic, each at most once, and calls handlers while walking instead of collecting matches.
 *
 * Delivery semantics:
 * - Overlapping subscriptions are not merged: a handler subscribed through two matching filters (or twice
 *   through one) is called once per subscription, as each subscription is an independent consumer.
 * - Subscriptions made during a delivery do not receive the message being delivered; subscriptions
 *   cancelled during a delivery are not called afterwards.
 * - No order is guaranteed between subscriptions of different filters.
 */
export class InMemoryTopicBus implements TopicBus {
  private readonly root: TrieNode = newNode(undefined, undefined);
  private readonly onHandlerError: ((error: unknown, message: BusMessage) => void) | undefined;
  private lastId = 0;
  private subscriptions = 0;
  private nodes = 1;
  /**
   * Depth-first work stack shared by all publishes so a walk allocates nothing and deep topics cannot
   * overflow the call stack. A publish from inside a handler uses the slots above the outer walk's top.
   */
  private readonly stackNodes: TrieNode[] = [];
  private readonly stackStarts: number[] = [];
  private stackTop = 0;
  /** The queues of `share`, by queue and filter. */
  private readonly queues = new Map<string, { members: BusHandler[]; subscription: BusSubscription }>();

  constructor(options: InMemoryTopicBusOptions = {}) {
    this.onHandlerError = options.onHandlerError;
  }

  /** Active subscriptions, for metrics. */
  get subscriptionCount(): number {
    return this.subscriptions;
  }

  /** Trie nodes including the root, for metrics; shows that unsubscribe prunes. */
  get nodeCount(): number {
    return this.nodes;
  }

  publish(message: BusMessage): number {
    const topic = message.topic;
    assertTopicName(topic);
    // MQTT 4.7.2: filters starting with a wildcard do not match topics starting with '$'.
    const hidden = topic.charCodeAt(0) === DOLLAR;
    const newestId = this.lastId;
    const base = this.stackTop;
    let delivered = 0;
    try {
      this.push(this.root, 0);
      while (this.stackTop > base) {
        this.stackTop--;
        const node = this.stackNodes[this.stackTop] as TrieNode;
        // Index where the next unmatched level starts; past the end once every level is matched.
        const start = this.stackStarts[this.stackTop] as number;
        const wildcardsAllowed = !hidden || node !== this.root;
        // '#' also matches the parent level, so it fires whether or not levels remain.
        if (node.hash !== undefined && wildcardsAllowed) {
          delivered += this.deliver(node.hash, message, newestId);
        }
        if (start > topic.length) {
          if (node.exact !== undefined) delivered += this.deliver(node.exact, message, newestId);
          continue;
        }
        let end = topic.indexOf('/', start);
        if (end === -1) end = topic.length;
        const child = node.children?.get(topic.slice(start, end));
        if (child !== undefined) this.push(child, end + 1);
        if (node.plus !== undefined && wildcardsAllowed) this.push(node.plus, end + 1);
      }
    } finally {
      // Only reached with a raised stack top if something unexpected threw, e.g. a RangeError.
      this.stackTop = base;
    }
    return delivered;
  }

  /** One process is one node: both reaches see every message. */
  subscribe(filter: string, handler: BusHandler, _options?: SubscribeOptions): BusSubscription {
    assertTopicFilter(filter);
    const levels = filter.split('/');
    const isHash = levels[levels.length - 1] === '#';
    const depth = isHash ? levels.length - 1 : levels.length;
    let node = this.root;
    for (let i = 0; i < depth; i++) {
      const level = levels[i] as string;
      if (level === '+') {
        node.plus ??= this.createNode(node, undefined);
        node = node.plus;
        continue;
      }
      node.children ??= new Map();
      let child = node.children.get(level);
      if (child === undefined) {
        child = this.createNode(node, level);
        node.children.set(level, child);
      }
      node = child;
    }
    const entry: Entry = { id: ++this.lastId, handler, node, isHash, active: true };
    if (isHash) (node.hash ??= new Set()).add(entry);
    else (node.exact ??= new Set()).add(entry);
    this.subscriptions++;
    return { unsubscribe: () => this.remove(entry) };
  }

  /** No other node to attract from. */
  attract(filter: string): BusSubscription {
    assertTopicFilter(filter);
    return NOTHING;
  }

  /** One process is the whole queue: its handlers take the messages in turn. */
  share(queue: string, filter: string, handler: BusHandler): BusSubscription {
    assertTopicFilter(filter);
    const key = `${queue}\u0000${filter}`;
    let shared = this.queues.get(key);
    if (shared === undefined) {
      const members: BusHandler[] = [];
      let cursor = 0;
      const subscription = this.subscribe(filter, (message) => {
        const member = members[cursor++ % members.length];
        return member?.(message);
      });
      shared = { members, subscription };
      this.queues.set(key, shared);
    }
    const owner = shared;
    const member: BusHandler = (message) => handler(message);
    owner.members.push(member);
    return {
      unsubscribe: () => {
        const at = owner.members.indexOf(member);
        if (at === -1) return;
        owner.members.splice(at, 1);
        if (owner.members.length > 0) return;
        owner.subscription.unsubscribe();
        this.queues.delete(key);
      },
    };
  }

  private push(node: TrieNode, start: number): void {
    this.stackNodes[this.stackTop] = node;
    this.stackStarts[this.stackTop] = start;
    this.stackTop++;
  }

  private deliver(entries: Set<Entry>, message: BusMessage, newestId: number): number {
    let delivered = 0;
    // Set iteration tolerates deletes and adds during the loop; the id check skips the adds.
    for (const entry of entries) {
      if (entry.id > newestId) continue;
      try {
        const result: unknown = entry.handler(message);
        if (result instanceof Promise) result.catch((error: unknown) => this.report(error, message));
        // A bridge counts the clients it reached; any other handler is one receiver.
        delivered += isReach(result) ? result.reached : 1;
      } catch (error) {
        delivered++;
        this.report(error, message);
      }
    }
    return delivered;
  }

  private report(error: unknown, message: BusMessage): void {
    try {
      this.onHandlerError?.(error, message);
    } catch {
      // The error reporter failing must not break delivery either; there is nowhere left to report to.
    }
  }

  private createNode(parent: TrieNode, level: string | undefined): TrieNode {
    this.nodes++;
    return newNode(parent, level);
  }

  private remove(entry: Entry): void {
    if (!entry.active) return;
    entry.active = false;
    this.subscriptions--;
    const node = entry.node;
    if (entry.isHash) {
      node.hash?.delete(entry);
      if (node.hash?.size === 0) node.hash = undefined;
    } else {
      node.exact?.delete(entry);
      if (node.exact?.size === 0) node.exact = undefined;
    }
    this.prune(node);
  }

  /** Detaches empty nodes bottom-up so topics that are no longer subscribed cost no memory. */
  private prune(from: TrieNode): void {
    let node = from;
    while (
      node.parent !== undefined &&
      node.exact === undefined &&
      node.hash === undefined &&
      node.plus === undefined &&
      node.children === undefined
    ) {
      const parent = node.parent;
      if (node.level === undefined) {
        parent.plus = undefined;
      } else {
        parent.children?.delete(node.level);
        if (parent.children?.size === 0) parent.children = undefined;
      }
      this.nodes--;
      node = parent;
    }
  }
}

function isReach(value: unknown): value is BusReach {
  return typeof value === 'object' && value !== null && typeof (value as BusReach).reached === 'number';
}

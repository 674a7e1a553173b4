import { type Subscription, type SubscriptionMatch } from './subscription.js';

interface SharedGroup {
  readonly members: Map<string, Subscription>;
  cursor: number;
}

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  readonly direct: Map<string, Subscription>;
  readonly shared: Map<string, SharedGroup>;
}

function node(): TrieNode {
  return { children: new Map(), direct: new Map(), shared: new Map() };
}

const NO_MATCHES: readonly SubscriptionMatch[] = Object.freeze([]);
const NO_MEMBERS: ReadonlyMap<string, Subscription> = new Map();

/**
 * Every session's subscriptions in one trie keyed by filter level, so matching a topic costs its
 * depth, not the number of subscriptions. A shared group (`$share/g/f`) gets each message once,
 * round robin over its members, preferring members that are connected.
 */
export class SubscriptionStore {
  private readonly root = node();
  private count = 0;
  /** Members per filter (direct and shared alike), for the filter events. */
  private readonly perFilter = new Map<string, number>();
  /** A filter got its first member, or lost its last (the bus bridge attracts its topics). */
  onFilter: ((filter: string, present: boolean) => void) | null = null;
  /**
   * Cluster mode: shared groups are served through the bus's queues, across the nodes; `match` leaves
   * them out and their filters raise no filter events. Set before the first subscription.
   */
  sharedElsewhere = false;

  /** Every filter that has a member now. */
  filters(): IterableIterator<string> {
    return this.perFilter.keys();
  }

  get size(): number {
    return this.count;
  }

  add(clientId: string, subscription: Subscription): void {
    let at = this.root;
    for (const level of subscription.filter.split('/')) {
      let next = at.children.get(level);
      if (next === undefined) at.children.set(level, (next = node()));
      at = next;
    }
    const members = this.membersOf(at, subscription.group, true);
    if (!members.has(clientId)) {
      this.count++;
      if (!this.isElsewhere(subscription)) this.countFilter(subscription.filter, 1);
    }
    members.set(clientId, subscription);
  }

  remove(clientId: string, subscription: Subscription): void {
    const path: TrieNode[] = [this.root];
    const levels = subscription.filter.split('/');
    for (const level of levels) {
      const next = path[path.length - 1]?.children.get(level);
      if (next === undefined) return;
      path.push(next);
    }
    const leaf = path[path.length - 1] as TrieNode;
    const members = this.membersOf(leaf, subscription.group, false);
    if (members === undefined || !members.delete(clientId)) return;
    this.count--;
    if (!this.isElsewhere(subscription)) this.countFilter(subscription.filter, -1);
    if (subscription.group !== null && members.size === 0) leaf.shared.delete(subscription.group);
    // Prune the branch back to the first node still in use.
    for (let i = levels.length; i > 0; i--) {
      const at = path[i] as TrieNode;
      if (at.children.size > 0 || at.direct.size > 0 || at.shared.size > 0) break;
      (path[i - 1] as TrieNode).children.delete(levels[i - 1] as string);
    }
  }

  /** The members of a shared group on this filter, by client id (none: empty). */
  groupMembers(group: string, filter: string): ReadonlyMap<string, Subscription> {
    let at: TrieNode | undefined = this.root;
    for (const level of filter.split('/')) at = at?.children.get(level);
    return at?.shared.get(group)?.members ?? NO_MEMBERS;
  }

  private isElsewhere(subscription: Subscription): boolean {
    return this.sharedElsewhere && subscription.group !== null;
  }

  private countFilter(filter: string, delta: 1 | -1): void {
    const next = (this.perFilter.get(filter) ?? 0) + delta;
    if (next > 0) this.perFilter.set(filter, next);
    else this.perFilter.delete(filter);
    if (next === 1 && delta === 1) this.onFilter?.(filter, true);
    else if (next === 0) this.onFilter?.(filter, false);
  }

  /** Every subscription matching `topic`; one member per shared group. */
  match(topic: string, isOnline: (clientId: string) => boolean): readonly SubscriptionMatch[] {
    // Every bus message is matched here (other modules' traffic, bridged): most brokers have no MQTT subscriber.
    if (this.count === 0) return NO_MATCHES;
    const found: SubscriptionMatch[] = [];
    const groups: SharedGroup[] = [];
    this.walk(this.root, topic.split('/'), 0, topic.charCodeAt(0) === DOLLAR, found, groups);
    if (this.sharedElsewhere) return found;
    for (const group of groups) {
      const pick = pickMember(group, isOnline);
      if (pick !== undefined) found.push(pick);
    }
    return found;
  }

  /**
   * Every subscription matching `topic`, each member of each shared group included, for an operator's
   * view: unlike `match`, it moves no group's round robin and leaves no group out (cluster mode).
   */
  everyMatch(topic: string): SubscriptionMatch[] {
    const found: SubscriptionMatch[] = [];
    if (this.count === 0) return found;
    const groups: SharedGroup[] = [];
    this.walk(this.root, topic.split('/'), 0, topic.charCodeAt(0) === DOLLAR, found, groups);
    for (const group of groups) {
      for (const [clientId, subscription] of group.members) found.push({ clientId, subscription });
    }
    return found;
  }

  /** A method with its state in arguments, not closures made per call: this runs once per PUBLISH. */
  private walk(
    at: TrieNode,
    levels: readonly string[],
    i: number,
    dollar: boolean,
    found: SubscriptionMatch[],
    groups: SharedGroup[],
  ): void {
    // MQTT 4.7.2: a filter starting with a wildcard does not match a topic starting with '$'.
    const wildcards = i > 0 || !dollar;
    const hash = wildcards ? at.children.get('#') : undefined;
    if (hash !== undefined) collect(hash, found, groups);
    if (i === levels.length) return collect(at, found, groups);
    const exact = at.children.get(levels[i] as string);
    if (exact !== undefined) this.walk(exact, levels, i + 1, dollar, found, groups);
    const plus = wildcards ? at.children.get('+') : undefined;
    if (plus !== undefined) this.walk(plus, levels, i + 1, dollar, found, groups);
  }

  private membersOf(at: TrieNode, group: string | null, create: true): Map<string, Subscription>;
  private membersOf(at: TrieNode, group: string | null, create: false): Map<string, Subscription> | undefined;
  private membersOf(
    at: TrieNode,
    group: string | null,
    create: boolean,
  ): Map<string, Subscription> | undefined {
    if (group === null) return at.direct;
    let shared = at.shared.get(group);
    if (shared === undefined && create) at.shared.set(group, (shared = { members: new Map(), cursor: 0 }));
    return shared?.members;
  }
}

const DOLLAR = 0x24;

function collect(at: TrieNode, found: SubscriptionMatch[], groups: SharedGroup[]): void {
  for (const [clientId, subscription] of at.direct) found.push({ clientId, subscription });
  for (const group of at.shared.values()) groups.push(group);
}

function pickMember(
  group: SharedGroup,
  isOnline: (clientId: string) => boolean,
): SubscriptionMatch | undefined {
  const members = [...group.members];
  if (members.length === 0) return undefined;
  for (let step = 0; step < members.length; step++) {
    const [clientId, subscription] = members[(group.cursor + step) % members.length] as [
      string,
      Subscription,
    ];
    if (isOnline(clientId)) {
      group.cursor = (group.cursor + step + 1) % members.length;
      return { clientId, subscription };
    }
  }
  // Nobody connected: queue it in the next member's session.
  const [clientId, subscription] = members[group.cursor % members.length] as [string, Subscription];
  group.cursor = (group.cursor + 1) % members.length;
  return { clientId, subscription };
}

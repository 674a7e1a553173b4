import { isExpired, type MqttMessage } from './message.js';

function costOf(message: MqttMessage): number {
  return message.payload.byteLength + message.topic.length;
}

/** One topic level: the retained message of the topic ending here, and the levels below. */
interface Level {
  message: MqttMessage | undefined;
  readonly children: Map<string, Level>;
}

/** A wildcard in a filter's first level does not match topics starting with '$' (MQTT 4.7.2). */
const DOLLAR = 0x24;

function level(): Level {
  return { message: undefined, children: new Map() };
}

/**
 * The last retained message per topic, bounded in topics and bytes. An empty payload clears the
 * topic; a message that would pass a bound is refused (the stored ones keep their messages) rather
 * than evicting someone else's state. Topics are kept in a tree of their levels, as Mosquitto keeps
 * them, so a new subscription visits only the branches its filter can match: a SUBSCRIBE of many
 * filters once scanned every retained message per filter (the worst-message benchmark's MQTT row).
 */
export class RetainedStore {
  private readonly messages = new Map<string, MqttMessage>();
  /** When each topic's message was stored, epoch milliseconds. */
  private readonly times = new Map<string, number>();
  private readonly root = level();
  private totalBytes = 0;

  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.messages.size;
  }

  /**
   * false when the message did not fit. `storedAt` (epoch milliseconds) is when it was stored: now, or
   * in a cluster when the node it came from stored it.
   */
  store(message: MqttMessage, storedAt: number): boolean {
    const previous = this.messages.get(message.topic);
    if (message.payload.byteLength === 0) {
      if (previous !== undefined) this.remove(previous);
      return true;
    }
    if (previous === undefined && this.messages.size >= this.maxCount) return false;
    const bytes = this.totalBytes - (previous === undefined ? 0 : costOf(previous)) + costOf(message);
    if (bytes > this.maxBytes) return false;
    this.messages.set(message.topic, message);
    this.times.set(message.topic, storedAt);
    let node = this.root;
    for (const name of message.topic.split('/')) {
      let child = node.children.get(name);
      if (child === undefined) node.children.set(name, (child = level()));
      node = child;
    }
    node.message = message;
    this.totalBytes = bytes;
    return true;
  }

  /** When the retained message of `topic` was stored (epoch milliseconds), if there is one. */
  storedAt(topic: string): number | undefined {
    return this.times.get(topic);
  }

  /** The retained message of `topic`, if any. */
  get(topic: string): MqttMessage | undefined {
    return this.messages.get(topic);
  }

  /** The live retained messages matching `filter` (a valid one); expired ones are dropped on the way. */
  matching(filter: string, now: number): MqttMessage[] {
    const found: MqttMessage[] = [];
    const expired: MqttMessage[] = [];
    const take = (message: MqttMessage | undefined) => {
      if (message === undefined) return;
      if (isExpired(message, now)) expired.push(message);
      else found.push(message);
    };
    const levels = filter.split('/');
    // Iterative, not recursive: a topic or a filter may have thousands of levels.
    const walking: [Level, number][] = [[this.root, 0]];
    const subtrees: Level[] = [];
    const visible = (depth: number, name: string) => depth > 0 || name.charCodeAt(0) !== DOLLAR;
    // Breadth first, in the order topics arrived at each level.
    for (let i = 0; i < walking.length; i++) {
      const [node, depth] = walking[i] as [Level, number];
      if (depth === levels.length) {
        take(node.message);
        continue;
      }
      const name = levels[depth] as string;
      if (name === '#') {
        // '#' also matches the parent level: 'a/#' matches 'a'.
        if (depth > 0) take(node.message);
        for (const [childName, child] of node.children) if (visible(depth, childName)) subtrees.push(child);
      } else if (name === '+') {
        for (const [childName, child] of node.children)
          if (visible(depth, childName)) walking.push([child, depth + 1]);
      } else {
        const child = node.children.get(name);
        if (child !== undefined) walking.push([child, depth + 1]);
      }
    }
    for (let i = 0; i < subtrees.length; i++) {
      const node = subtrees[i] as Level;
      take(node.message);
      for (const child of node.children.values()) subtrees.push(child);
    }
    for (const message of expired) this.remove(message);
    return found;
  }

  private remove(message: MqttMessage): void {
    this.messages.delete(message.topic);
    this.times.delete(message.topic);
    this.totalBytes -= costOf(message);
    // Clear the topic's level, then prune the levels left holding nothing.
    const path: Level[] = [this.root];
    const names = message.topic.split('/');
    for (const name of names) {
      const next = (path[path.length - 1] as Level).children.get(name);
      if (next === undefined) return;
      path.push(next);
    }
    (path[path.length - 1] as Level).message = undefined;
    for (let i = names.length; i > 0; i--) {
      const node = path[i] as Level;
      if (node.message !== undefined || node.children.size > 0) break;
      (path[i - 1] as Level).children.delete(names[i - 1] as string);
    }
  }
}

import { topicMatches } from '#broker/bus';
import { isExpired, type MqttMessage } from './message.js';

function costOf(message: MqttMessage): number {
  return message.payload.byteLength + message.topic.length;
}

/**
 * The last retained message per topic, bounded in topics and bytes. An empty payload clears the
 * topic; a message that would pass a bound is refused (the stored ones keep their messages) rather
 * than evicting someone else's state.
 */
export class RetainedStore {
  private readonly messages = new Map<string, MqttMessage>();
  private totalBytes = 0;

  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.messages.size;
  }

  /** false when the message did not fit. */
  store(message: MqttMessage): boolean {
    const previous = this.messages.get(message.topic);
    if (message.payload.byteLength === 0) {
      if (previous !== undefined) this.remove(previous);
      return true;
    }
    if (previous === undefined && this.messages.size >= this.maxCount) return false;
    const bytes = this.totalBytes - (previous === undefined ? 0 : costOf(previous)) + costOf(message);
    if (bytes > this.maxBytes) return false;
    this.messages.set(message.topic, message);
    this.totalBytes = bytes;
    return true;
  }

  /** The retained message of `topic`, if any. */
  get(topic: string): MqttMessage | undefined {
    return this.messages.get(topic);
  }

  /** The live retained messages matching `filter`; expired ones are dropped on the way. */
  matching(filter: string, now: number): MqttMessage[] {
    const found: MqttMessage[] = [];
    for (const message of this.messages.values()) {
      if (isExpired(message, now)) this.remove(message);
      else if (topicMatches(filter, message.topic)) found.push(message);
    }
    return found;
  }

  private remove(message: MqttMessage): void {
    this.messages.delete(message.topic);
    this.totalBytes -= costOf(message);
  }
}

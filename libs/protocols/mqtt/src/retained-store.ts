import { topicMatches } from '#broker/bus';
import { isExpired, type MqttMessage } from './message.js';

/**
 * The last retained message per topic. An empty payload clears the topic; past `max` topics a new
 * topic is refused (the existing ones keep their messages) rather than evicting someone else's state.
 */
export class RetainedStore {
  private readonly messages = new Map<string, MqttMessage>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.messages.size;
  }

  /** false when the store is full and the topic was not already retained. */
  store(message: MqttMessage): boolean {
    if (message.payload.byteLength === 0) {
      this.messages.delete(message.topic);
      return true;
    }
    if (!this.messages.has(message.topic) && this.messages.size >= this.max) return false;
    this.messages.set(message.topic, message);
    return true;
  }

  /** The live retained messages matching `filter`; expired ones are dropped on the way. */
  matching(filter: string, now: number): MqttMessage[] {
    const found: MqttMessage[] = [];
    for (const [topic, message] of this.messages) {
      if (isExpired(message, now)) {
        this.messages.delete(topic);
        continue;
      }
      if (topicMatches(filter, topic)) found.push(message);
    }
    return found;
  }
}

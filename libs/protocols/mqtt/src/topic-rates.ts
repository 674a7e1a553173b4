import { type Clock } from '#broker/kit';

/** The topics counted at most: more would cost memory and a longer scan on each eviction. */
export const MAX_COUNTED_TOPICS = 100;
/** The length of one counting window: a rate covers the last full window and the current one. */
export const RATE_WINDOW_MS = 30_000;
/** The shortest span a rate is taken over, so a counter just started does not show a burst as a flood. */
const MIN_SPAN_MS = 1_000;

/** One counted topic: messages in the last full window and in the current one, and how many may be others'. */
interface Counted {
  previous: number;
  current: number;
  /** Messages counted for the topic it replaced (space-saving): the count is at most this much too high. */
  errorPrevious: number;
  errorCurrent: number;
}

/** A topic's rate as the dashboard shows it. */
export interface TopicRate {
  readonly topic: string;
  /** Messages counted over `spanMs` (at most `overcount` of them another topic's). */
  readonly messages: number;
  readonly overcount: number;
  readonly perSecond: number;
  readonly spanMs: number;
}

/**
 * The busiest topics by messages published in, with a fixed memory bound: a space-saving counter
 * (Metwally et al.) of at most MAX_COUNTED_TOPICS topics. A topic not counted yet, when the table is
 * full, takes the place of the least busy one and inherits its count (remembered as its overcount), so
 * a topic busier than the evicted ones always gets in and keeps its place. Counts go by windows of
 * RATE_WINDOW_MS: a rate is what the last full window and the current one counted, over their span;
 * a topic quiet for a whole window is forgotten. Recording is a Map lookup and two increments (a new
 * topic also allocates its entry); nothing runs on a timer.
 */
export class TopicRates {
  private readonly counted = new Map<string, Counted>();
  /**
   * Entries that counted `fewest` messages at the last scan, in the order they were found. Until the next
   * window, counts only grow and a newcomer counts more than the one it replaced, so one still at
   * `fewest` is a least busy entry: replacing topic after topic (a fan-in over many topics) takes them
   * from here, and scans the table again only once they are used up, not at every message.
   */
  private fewestTopics: string[] = [];
  private fewest = 0;
  private readonly startedAt: number;
  private windowStart: number;

  constructor(
    private readonly clock: Clock,
    private readonly capacity = MAX_COUNTED_TOPICS,
  ) {
    this.startedAt = this.windowStart = clock.monotonic();
  }

  /** One message published in on `topic`. */
  record(topic: string): void {
    this.roll(this.clock.monotonic());
    const entry = this.counted.get(topic);
    if (entry !== undefined) {
      entry.current++;
      return;
    }
    if (this.counted.size < this.capacity) {
      this.counted.set(topic, { previous: 0, current: 1, errorPrevious: 0, errorCurrent: 0 });
      return;
    }
    const [evicted, least] = this.leastBusy();
    this.counted.delete(evicted);
    // The evicted entry is the newcomer's: no allocation per message in a fan-in over many topics.
    const total = least.previous + least.current;
    least.previous = least.errorPrevious = 0;
    least.current = total + 1;
    least.errorCurrent = total;
    this.counted.set(topic, least);
  }

  /** The `limit` busiest topics now, busiest first (ties by topic). */
  busiest(limit = this.capacity): TopicRate[] {
    const now = this.clock.monotonic();
    this.roll(now);
    const spanMs = Math.max(
      MIN_SPAN_MS,
      Math.min(now - this.startedAt, now - this.windowStart + RATE_WINDOW_MS),
    );
    const rates: TopicRate[] = [];
    for (const [topic, c] of this.counted) {
      const messages = c.previous + c.current;
      rates.push({
        topic,
        messages,
        overcount: c.errorPrevious + c.errorCurrent,
        perSecond: (messages * 1000) / spanMs,
        spanMs,
      });
    }
    rates.sort((a, b) => b.messages - a.messages || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
    return rates.slice(0, limit);
  }

  /** Starts a new window when the current one is over (forgetting what the one before counted). */
  private roll(now: number): void {
    if (now < this.windowStart + RATE_WINDOW_MS) return;
    const idle = now >= this.windowStart + 2 * RATE_WINDOW_MS;
    this.windowStart = now - ((now - this.windowStart) % RATE_WINDOW_MS);
    this.fewestTopics = [];
    if (idle) {
      this.counted.clear();
      return;
    }
    for (const [topic, c] of this.counted) {
      if (c.current === 0) {
        this.counted.delete(topic);
        continue;
      }
      c.previous = c.current;
      c.errorPrevious = c.errorCurrent;
      c.current = 0;
      c.errorCurrent = 0;
    }
  }

  /** The entry counting the fewest messages (called with the table full, so there is one). */
  private leastBusy(): [string, Counted] {
    for (let topic = this.fewestTopics.pop(); topic !== undefined; topic = this.fewestTopics.pop()) {
      const c = this.counted.get(topic);
      if (c !== undefined && c.previous + c.current === this.fewest) return [topic, c];
    }
    let fewest = Number.POSITIVE_INFINITY;
    for (const [topic, c] of this.counted) {
      const messages = c.previous + c.current;
      if (messages < fewest) {
        fewest = messages;
        this.fewestTopics = [];
      }
      if (messages === fewest) this.fewestTopics.push(topic);
    }
    this.fewest = fewest;
    // The first found goes first, as the scan before this one chose.
    this.fewestTopics.reverse();
    const topic = this.fewestTopics.pop() as string;
    return [topic, this.counted.get(topic) as Counted];
  }
}

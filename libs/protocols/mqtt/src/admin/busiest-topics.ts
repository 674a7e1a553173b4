import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { MqttServer } from '../mqtt-server.js';
import { MAX_COUNTED_TOPICS, type TopicRate } from '../topic-rates.js';

const BUSIEST = 'admin.mqtt.busiest';

/**
 * The most topic bytes one node answers with (its entries busiest first, each that still fits), as JSON
 * quotes them: a hundred topic names of up to 64 KiB each would not pass through NATS (1 MiB a message
 * by default).
 */
export const MAX_ANSWER_TOPIC_BYTES = 256 * 1024;

/** A topic's counts summed over the nodes that counted it. */
export interface BusiestTopic {
  readonly topic: string;
  /** Messages published in on it, over each node's last half to full minute. */
  readonly messages: number;
  /** How many of `messages` may be other topics' (each node's space-saving bound, summed). */
  readonly overcount: number;
  /** The nodes' rates summed. */
  readonly perSecond: number;
  /** The nodes that counted it, sorted; empty on a single broker. */
  readonly nodes: readonly string[];
}

/** GET /admin/v1/mqtt/topics/busiest: the busiest topics first, and the live nodes that did not answer. */
export interface BusiestTopicsView {
  readonly topics: readonly BusiestTopic[];
  readonly missing: readonly string[];
}

/**
 * The topics MQTT clients publish to most: on a single broker this node's count (TopicRates); in
 * cluster mode every live node's, asked through the cluster's request/reply (each answers with at most
 * its MAX_COUNTED_TOPICS entries) and merged, with the nodes that did not answer in time.
 */
@Injectable()
export class BusiestTopics implements OnModuleInit {
  constructor(
    private readonly server: MqttServer,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  /** Whether the answer covers several nodes. */
  get clustered(): boolean {
    return this.cluster !== null;
  }

  onModuleInit(): void {
    this.cluster?.serve(BUSIEST, () => this.here());
  }

  /**
   * The busiest MAX_COUNTED_TOPICS topics, across the live nodes in cluster mode, each waited for up to
   * `timeoutMs` (the cluster's request limit by default).
   */
  async gather(timeoutMs?: number): Promise<BusiestTopicsView> {
    if (this.cluster === null) return mergeBusiest(new Map([[null, this.here()]]), []);
    const { answers, missing } = await this.cluster.scatter<TopicRate[]>(BUSIEST, null, timeoutMs);
    return mergeBusiest(answers, missing);
  }

  private here(): TopicRate[] {
    return nodeAnswer(this.server.broker.topicRates.busiest(MAX_COUNTED_TOPICS));
  }
}

/**
 * What a node answers: its `rates` in order, up to MAX_ANSWER_TOPIC_BYTES of topics; one that would go
 * over is left out and the next ones still tried, so that one long topic name (a 64 KiB one of control
 * characters is 384 KiB quoted) does not hide the rest. Counted as the reply's JSON has them, where a
 * control character takes 6 bytes (\u0001): 256 KiB of raw ones would be 1.5 MiB.
 */
export function nodeAnswer(rates: Iterable<TopicRate>): TopicRate[] {
  const kept: TopicRate[] = [];
  let bytes = 0;
  for (const rate of rates) {
    const topicBytes = Buffer.byteLength(JSON.stringify(rate.topic));
    if (bytes + topicBytes > MAX_ANSWER_TOPIC_BYTES) continue;
    bytes += topicBytes;
    kept.push(rate);
  }
  return kept;
}

/**
 * The nodes' counts as one: per topic the messages, overcounts and rates summed and the nodes that
 * counted it (a node's null id, on a single broker, is not named); busiest first (ties by topic), the
 * first MAX_COUNTED_TOPICS. A node's answer beyond MAX_COUNTED_TOPICS entries is not read.
 */
export function mergeBusiest(
  answers: ReadonlyMap<string | null, readonly TopicRate[]>,
  missing: readonly string[],
): BusiestTopicsView {
  const byTopic = new Map<
    string,
    { messages: number; overcount: number; perSecond: number; nodes: string[] }
  >();
  for (const [node, rates] of answers) {
    for (const rate of rates.slice(0, MAX_COUNTED_TOPICS)) {
      let sum = byTopic.get(rate.topic);
      if (sum === undefined) {
        sum = { messages: 0, overcount: 0, perSecond: 0, nodes: [] };
        byTopic.set(rate.topic, sum);
      }
      sum.messages += rate.messages;
      sum.overcount += rate.overcount;
      sum.perSecond += rate.perSecond;
      if (node !== null) sum.nodes.push(node);
    }
  }
  const topics = [...byTopic]
    .map(([topic, sum]) => ({ topic, ...sum, nodes: sum.nodes.sort(compare) }))
    .sort((a, b) => b.messages - a.messages || compare(a.topic, b.topic))
    .slice(0, MAX_COUNTED_TOPICS);
  return { topics, missing: [...missing].sort(compare) };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

import { BadRequestException, Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { assertTopicName } from '#broker/bus';
import { ClusterNode } from '#broker/cluster';
import { type DashboardLookup, type LookupResult, type LookupView } from '#broker/gateway';
import { MqttServer } from '../mqtt-server.js';

/** The subscriptions shown at most, from each node and in all. */
export const MAX_SUBSCRIBER_ROWS = 200;

const SUBSCRIBERS = 'admin.mqtt.subscribers';

/** One session's subscription matching the topic, on the node holding the session. */
export interface SubscriberRow {
  readonly clientId: string;
  readonly node: string | null;
  /** The filter as subscribed (`$share/<group>/...` included). */
  readonly filter: string;
  readonly qos: number;
  readonly group: string | null;
  readonly connected: boolean;
}

/** What one node holds: its first MAX_SUBSCRIBER_ROWS rows and how many there are. */
export interface SubscribersHere {
  readonly rows: readonly SubscriberRow[];
  readonly total: number;
}

/**
 * The dashboard's "MQTT subscribers" lookup: the sessions whose subscriptions match a topic name, on
 * this node and, in cluster mode, on every live node (each answers for its own sessions), with the
 * nodes that did not answer in time. Every member of a shared group is listed, connected or not; asking
 * moves no group's round robin. It offers no action.
 */
@Injectable()
export class SubscribersDashboardLookup implements DashboardLookup, OnModuleInit {
  readonly id = 'mqtt-subscribers';
  readonly title = 'MQTT subscribers';
  readonly keyLabel = 'Topic';

  constructor(
    private readonly server: MqttServer,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    // A topic from another node is checked again here: a node answers only for a valid one.
    this.cluster?.serve(SUBSCRIBERS, (topic) => this.here(String(topic)));
  }

  async find(topic: string): Promise<LookupResult> {
    try {
      assertTopicName(topic);
    } catch (err) {
      throw new BadRequestException(`key: ${(err as Error).message}`);
    }
    if (this.cluster === null) return resultOf(topic, [this.here(topic)], []);
    const { answers, missing } = await this.cluster.scatter<SubscribersHere>(SUBSCRIBERS, topic);
    return resultOf(topic, [...answers.values()], missing);
  }

  act(): Promise<'done' | 'not-found'> {
    return Promise.resolve('not-found');
  }

  private here(topic: string): SubscribersHere {
    assertTopicName(topic);
    const broker = this.server.broker;
    const node = this.cluster?.nodeId ?? null;
    const matches = broker.subscriptions.everyMatch(topic);
    const rows = matches.slice(0, MAX_SUBSCRIBER_ROWS).map(({ clientId, subscription }) => ({
      clientId,
      node,
      filter: subscription.raw,
      qos: subscription.qos,
      group: subscription.group,
      connected: (broker.sessions.get(clientId)?.owner ?? null) !== null,
    }));
    return { rows, total: matches.length };
  }
}

function resultOf(topic: string, answers: readonly SubscribersHere[], missing: string[]): LookupResult {
  const view = subscribersView(topic, answers, missing);
  return view === null ? { found: false, missing } : { found: true, view };
}

/**
 * The subscriptions matching `topic` from each node's answer as the dashboard's lookup shows them:
 * sorted by client id, node and filter, the first MAX_SUBSCRIBER_ROWS of them; null when none matched.
 */
export function subscribersView(
  topic: string,
  answers: readonly SubscribersHere[],
  missing: readonly string[],
): LookupView | null {
  const total = answers.reduce((sum, a) => sum + a.total, 0);
  if (total === 0) return null;
  const rows = answers
    .flatMap((a) => a.rows)
    .sort(
      (a, b) =>
        compare(a.clientId, b.clientId) || compare(a.node ?? '', b.node ?? '') || compare(a.filter, b.filter),
    )
    .slice(0, MAX_SUBSCRIBER_ROWS);
  return {
    heading: topic,
    node: null,
    fields: [{ label: 'Subscriptions', value: String(total) }],
    tables: [
      {
        id: 'subscribers',
        title:
          total > rows.length
            ? `Subscriptions (the first ${rows.length} of ${total})`
            : `Subscriptions (${total})`,
        columns: [
          { key: 'client', label: 'Client id' },
          { key: 'node', label: 'Node' },
          { key: 'filter', label: 'Filter' },
          { key: 'qos', label: 'QoS', kind: 'count' },
          { key: 'group', label: 'Shared group' },
          { key: 'connected', label: 'Connection' },
        ],
        empty: 'No subscription.',
        rows: rows.map((r) => ({
          // Unique: a client id and a filter have no NUL, and JSON quotes them apart.
          key: JSON.stringify([r.clientId, r.filter, r.node]),
          cells: {
            client: r.clientId,
            node: r.node,
            filter: r.filter,
            qos: r.qos,
            group: r.group,
            connected: r.connected ? 'connected' : 'not connected',
          },
        })),
      },
    ],
    missing,
    actions: [],
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

import { type BusMessage, type BusSubscription, type TopicBus } from '#broker/bus';
import { type MqttBroker } from '../mqtt-broker.js';
import { deliveryFor } from '../delivery.js';
import { fromBus } from '../bus-bridge.js';

/** A shared group on one filter that has a member connected here, and its place in the bus queue. */
interface Joined {
  readonly group: string;
  readonly filter: string;
  readonly subscription: BusSubscription;
  cursor: number;
}

/**
 * Shared subscriptions (`$share/group/filter`) across the nodes, as nats-server's MQTT support serves
 * them: each group and filter with a member connected on this node is one member of a bus queue (a
 * NATS queue group), so each message goes to one node of those with a connected member, and there to
 * one of its connected members in turn. A node whose members are all away leaves the queue, so its
 * share goes to the others. The QoS 1/2 messages of a group come from its stream consumer instead
 * (ClusterQueues): a node that dies with messages in flight hands them to the other members. While that
 * consumer opens here, its share waits for it, and goes out from here only if the consumer is new.
 */
export class ClusterShares {
  private readonly joined = new Map<string, Joined>();

  constructor(
    private readonly broker: MqttBroker,
    private readonly bus: TopicBus,
  ) {
    // Before the first subscription: the trie leaves groups to this class.
    broker.subscriptions.sharedElsewhere = true;
    broker.hooks.shared = (group, filter) => this.refresh(group, filter);
  }

  stop(): void {
    this.broker.hooks.shared = undefined;
    for (const joined of this.joined.values()) joined.subscription.unsubscribe();
    this.joined.clear();
  }

  /** In the queue while a member of the group is connected here, out of it otherwise. */
  private refresh(group: string, filter: string): void {
    const key = `${group}\u0000${filter}`;
    const here = this.hasConnected(group, filter);
    const joined = this.joined.get(key);
    if (here && joined === undefined) {
      const entry: Joined = {
        group,
        filter,
        cursor: 0,
        subscription: this.bus.share(`mqtt/${group}`, filter, (message) => this.deliver(entry, message)),
      };
      this.joined.set(key, entry);
    } else if (!here && joined !== undefined) {
      joined.subscription.unsubscribe();
      this.joined.delete(key);
    }
  }

  private hasConnected(group: string, filter: string): boolean {
    for (const clientId of this.broker.subscriptions.groupMembers(group, filter).keys()) {
      if ((this.broker.sessions.get(clientId)?.owner ?? null) !== null) return true;
    }
    return false;
  }

  private deliver(joined: Joined, busMessage: BusMessage): void {
    const message = fromBus(busMessage);
    const members = [...this.broker.subscriptions.groupMembers(joined.group, joined.filter)];
    const queues = this.broker.queues;
    for (let step = 0; step < members.length; step++) {
      const [clientId, subscription] = members[
        (joined.cursor + step) % members.length
      ] as (typeof members)[0];
      const session = this.broker.sessions.get(clientId);
      if (session === undefined || session.owner === null) continue;
      // The group's stream consumer brings its QoS 1/2 messages here (or holds them while it opens).
      if (message.stored === true && queues !== null && queues.takes(clientId, subscription, message)) return;
      joined.cursor = (joined.cursor + step + 1) % members.length;
      this.broker.deliver(session, deliveryFor(message, [subscription], false));
      return;
    }
    // Nobody connected here any more (the queue is being left): QoS 0 is at most once.
    this.broker.hooks.dropped?.('no shared subscriber connected here', null, message.topic);
  }
}

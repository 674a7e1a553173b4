import { type ISubscribePacket, type ISubscription } from 'mqtt-packet';
import { CLOSE } from '#broker/kit';
import { deliveryFor } from '../delivery.js';
import { type MqttClient } from '../mqtt-client.js';
import { MqttProtocolError, RC } from '../reason-codes.js';
import { type Session } from '../mqtt-session.js';
import { type Subscription } from '../subscription.js';
import { parseFilter, type ParsedFilter } from '../topic-filter.js';
import { requirePacketId } from './packet-id.js';
import { clientRecord, reasonText } from '../trace-records.js';

/** v3 has one failure code for every refused filter. */
const V3_FAILURE = 0x80;

const REFUSALS: Record<number, string> = {
  [RC.topicFilterInvalid]: 'invalid topic filter',
  [RC.notAuthorized]: 'not authorized',
  [RC.quotaExceeded]: 'too many subscriptions',
};

/** What a SUBSCRIBE made: the subscriptions, and those that get retained messages now. */
interface Made {
  readonly subscriptions: Subscription[];
  readonly retainedFor: { subscription: Subscription; isNew: boolean }[];
}

/**
 * SUBSCRIBE: one reason code per filter (granted QoS, or why not), then the retained messages the
 * new subscriptions ask for (v5 retain handling), after the SUBACK so clients see them as live. In a
 * cluster the SUBACK waits until the subscriptions are kept where every node finds them.
 */
export function handleSubscribe(client: MqttClient, packet: ISubscribePacket): void {
  const id = requirePacketId(packet.messageId, 'SUBSCRIBE');
  // mqtt-packet parses an empty payload; the specification calls it a malformed packet.
  if (packet.subscriptions.length === 0) {
    throw new MqttProtocolError(RC.malformed, 'a SUBSCRIBE without a topic filter (MQTT-3.8.3-2)');
  }
  const session = client.session as Session;
  const subscriptionId = packet.properties?.subscriptionIdentifier ?? null;
  if (subscriptionId === 0) throw new MqttProtocolError(RC.protocolError, 'subscription identifier 0');
  const granted: number[] = [];
  const problems: string[] = [];
  const made: Made = { subscriptions: [], retainedFor: [] };
  for (const request of packet.subscriptions) {
    const code = subscribeOne(client, session, request, subscriptionId, made);
    granted.push(client.version === 5 || code < 0x80 ? code : V3_FAILURE);
    if (code >= 0x80) problems.push(`${request.topic.slice(0, 64)}: ${REFUSALS[code] ?? 'refused'}`);
    if (client.broker.traces.active) {
      const outcome = code < 0x80 ? 'granted' : 'refused';
      const reason = code < 0x80 ? `QoS ${code}` : reasonText(code);
      const subscription = { filter: request.topic, qos: request.qos, packetId: id };
      client.broker.traces.client(clientRecord('subscribe', client.clientId, outcome, reason, subscription));
    }
  }
  const kept = client.broker.subscriptionsKept(session, made.subscriptions);
  if (kept === null) return acknowledge(client, session, id, granted, problems, made);
  kept
    .then(() => acknowledge(client, session, id, granted, problems, made))
    // Only a bug lands here; it ends this connection, never the process (no unhandled rejection).
    .catch((err: Error) => {
      client.log.error({ err: err.message }, 'mqtt subscribe failed');
      client.close(CLOSE.internalError, 'internal error', false);
    });
}

function acknowledge(
  client: MqttClient,
  session: Session,
  id: number,
  granted: number[],
  problems: string[],
  { retainedFor }: Made,
): void {
  client.write(
    problems.length > 0 && client.version === 5
      ? {
          cmd: 'suback',
          messageId: id,
          granted,
          properties: { reasonString: problems.join('; ').slice(0, 512) },
        }
      : { cmd: 'suback', messageId: id, granted },
  );

  const now = client.broker.clock.now();
  for (const { subscription, isNew } of retainedFor) {
    if (subscription.retainHandling === 2 || (subscription.retainHandling === 1 && !isNew)) continue;
    for (const message of client.broker.retained.matching(subscription.filter, now)) {
      client.broker.deliver(
        session,
        deliveryFor(message, [{ ...subscription, retainAsPublished: true }], true),
      );
    }
  }
}

function subscribeOne(
  client: MqttClient,
  session: Session,
  request: ISubscription,
  subscriptionId: number | null,
  made: Made,
): number {
  let parsed: ParsedFilter;
  try {
    parsed = parseFilter(request.topic);
  } catch (err) {
    // 3.1.1 has no reason code for a bad filter: the connection closes (4.7.1).
    if (client.version !== 5) throw new MqttProtocolError(RC.topicFilterInvalid, (err as Error).message);
    return RC.topicFilterInvalid;
  }
  if (parsed.group !== null && request.nl === true) {
    throw new MqttProtocolError(RC.protocolError, 'no-local on a shared subscription');
  }
  if (!client.permissions.maySubscribe(parsed.filter)) {
    client.log.info({ clientId: client.clientId, filter: request.topic }, 'mqtt subscribe not authorized');
    return RC.notAuthorized;
  }
  const isNew = !session.subscriptions.has(request.topic);
  if (isNew && session.subscriptions.size >= client.broker.config.maxSubscriptionsPerClient) {
    return RC.quotaExceeded;
  }
  const subscription: Subscription = {
    raw: request.topic,
    filter: parsed.filter,
    group: parsed.group,
    qos: request.qos,
    noLocal: request.nl === true,
    retainAsPublished: request.rap === true,
    retainHandling: request.rh ?? 0,
    subscriptionId,
  };
  client.broker.subscribe(session, subscription);
  made.subscriptions.push(subscription);
  // Shared subscriptions never get retained messages (v5 4.8.2).
  if (parsed.group === null) made.retainedFor.push({ subscription, isNew });
  return request.qos;
}

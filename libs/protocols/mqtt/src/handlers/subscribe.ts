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

/**
 * Filters handled in one turn of the event loop. A SUBSCRIBE of more (500 wildcard filters took 2 ms
 * of one turn, BENCHMARKS.md's worst-message benchmark) is handled this many at a time, a turn each.
 */
export const FILTERS_PER_TURN = 50;

/** What a SUBSCRIBE made: the subscriptions, and those that get retained messages now. */
interface Made {
  readonly subscriptions: Subscription[];
  readonly retainedFor: { subscription: Subscription; isNew: boolean }[];
}

/** One SUBSCRIBE under way: its packet, and what its filters have come to so far. */
interface Subscribing {
  readonly client: MqttClient;
  readonly session: Session;
  readonly packet: ISubscribePacket;
  readonly id: number;
  readonly subscriptionId: number | null;
  readonly granted: number[];
  readonly problems: string[];
  readonly made: Made;
}

/**
 * SUBSCRIBE: one reason code per filter (granted QoS, or why not), then the retained messages the
 * new subscriptions ask for (v5 retain handling), after the SUBACK so clients see them as live. In a
 * cluster the SUBACK waits until the subscriptions are kept where every node finds them.
 *
 * A SUBSCRIBE of more than FILTERS_PER_TURN filters takes a turn of the loop per slice of them, so
 * that other clients are served in between. The client's later packets wait meanwhile (MqttClient's
 * `hold`): none overtakes it. Each slice's new subscriptions get their retained messages as they
 * start, before the SUBACK (which MQTT allows, 3.8.4): sent at the end, a retained message could
 * arrive behind a newer one its publisher sent between two slices.
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
  const subscribing: Subscribing = {
    client,
    session,
    packet,
    id,
    subscriptionId,
    granted: [],
    problems: [],
    made: { subscriptions: [], retainedFor: [] },
  };
  if (packet.subscriptions.length <= FILTERS_PER_TURN) {
    subscribeSlice(subscribing, 0, packet.subscriptions.length);
    return finish(subscribing);
  }
  client.hold();
  setImmediate(nextSlice, subscribing, 0);
}

/**
 * Handles the slice from `start` in a turn of its own (its time charged to the client's input budget,
 * its retained messages sent), then schedules the next one, or sends the SUBACK and lets the client's
 * waiting packets go on.
 */
function nextSlice(subscribing: Subscribing, start: number): void {
  const { client, session, packet } = subscribing;
  // Gone, or its session taken over, meanwhile: the rest is not subscribed, and no SUBACK said it was.
  if (client.state !== 'connected' || client.session !== session) return;
  const started = client.broker.clock.monotonic();
  const end = Math.min(start + FILTERS_PER_TURN, packet.subscriptions.length);
  try {
    subscribeSlice(subscribing, start, end);
    sendRetained(client, session, subscribing.made.retainedFor.splice(0));
    if (end === packet.subscriptions.length) {
      finish(subscribing);
      client.resume();
    } else {
      setImmediate(nextSlice, subscribing, end);
    }
  } catch (err) {
    if (err instanceof MqttProtocolError) client.fail(err);
    else {
      // Only a bug lands here, outside the gateway's guard: it ends this connection, never the process.
      client.log.error({ err: (err as Error).message }, 'mqtt subscribe failed');
      client.close(CLOSE.internalError, 'internal error', false);
    }
  } finally {
    client.charge(client.broker.clock.monotonic() - started);
  }
}

function subscribeSlice(subscribing: Subscribing, start: number, end: number): void {
  const { client, session, packet, id, subscriptionId, granted, problems, made } = subscribing;
  for (let i = start; i < end; i++) {
    const request = packet.subscriptions[i] as ISubscription;
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
}

/** The SUBACK, once what was subscribed is kept (at once on a single node), then any retained messages left. */
function finish(subscribing: Subscribing): void {
  const { client, session, id, granted, problems, made } = subscribing;
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
  sendRetained(client, session, retainedFor);
}

/** The retained messages that new subscriptions ask for (v5 retain handling). */
function sendRetained(client: MqttClient, session: Session, retainedFor: Made['retainedFor']): void {
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

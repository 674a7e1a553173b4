import { assertTopicName } from '#broker/bus';
import { type IPublishPacket, type QoS } from 'mqtt-packet';
import { type MqttMessage, type PassThroughProperties } from '../message.js';
import { type MqttClient } from '../mqtt-client.js';
import { CLOSE } from '#broker/kit';
import { MqttProtocolError, RC } from '../reason-codes.js';
import { type Session } from '../mqtt-session.js';
import { requirePacketId } from './packet-id.js';
import { recordsReceipts } from './qos2-receipts.js';
import { publishRecord, reasonText } from '../trace-records.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

interface PublishInput {
  readonly topic: string;
  readonly payload: Buffer | string;
  readonly qos: QoS;
  readonly retain: boolean;
  readonly properties: PassThroughProperties & { messageExpiryInterval?: number };
  readonly publisherId: string;
}

/** A PUBLISH (or will) as a broker message; v5 properties pass through, v3 has none. */
export function messageFromPublish(client: MqttClient, input: PublishInput): MqttMessage {
  const payload = typeof input.payload === 'string' ? Buffer.from(input.payload) : input.payload;
  const { messageExpiryInterval, ...rest } = input.properties;
  const properties: PassThroughProperties = {};
  if (client.version === 5) {
    if (rest.payloadFormatIndicator === true) {
      try {
        utf8.decode(payload);
      } catch {
        throw new MqttProtocolError(
          RC.payloadFormatInvalid,
          'payload format indicator says UTF-8, payload is not',
        );
      }
      properties.payloadFormatIndicator = true;
    }
    if (rest.contentType !== undefined) properties.contentType = rest.contentType;
    if (rest.responseTopic !== undefined) {
      assertTopic(rest.responseTopic);
      properties.responseTopic = rest.responseTopic;
    }
    if (rest.correlationData !== undefined) properties.correlationData = rest.correlationData;
    if (rest.userProperties !== undefined) properties.userProperties = rest.userProperties;
  }
  return {
    topic: input.topic,
    payload,
    qos: input.qos,
    retain: input.retain,
    publisherId: input.publisherId,
    expiresAt:
      client.version === 5 && messageExpiryInterval !== undefined
        ? client.broker.clock.now() + messageExpiryInterval * 1000
        : null,
    properties,
  };
}

/** Inbound PUBLISH: resolve the topic alias, validate, authorize, route, acknowledge. */
export function handlePublish(client: MqttClient, packet: IPublishPacket): void {
  const session = client.session as Session;
  // mqtt-packet reads the flag as sent; Mosquitto treats a QoS 0 retransmission as malformed too.
  if (packet.dup && packet.qos === 0) {
    throw new MqttProtocolError(RC.malformed, 'DUP must be 0 on a QoS 0 PUBLISH (MQTT-3.3.1-2)');
  }
  const { topicAlias, subscriptionIdentifier, ...properties } = packet.properties ?? {};
  const topic = resolveTopic(client, packet.topic, topicAlias);
  assertTopic(topic);
  if (subscriptionIdentifier !== undefined) {
    throw new MqttProtocolError(RC.protocolError, 'a client must not send subscription identifiers');
  }
  const id = packet.qos > 0 ? requirePacketId(packet.messageId, 'PUBLISH') : 0;
  if (packet.qos === 2 && session.awaitingRelease.has(id)) {
    if (client.broker.traces.active)
      tracePublish(client, topic, packet, 'duplicate', 'a resend: delivered once');
    // A resend of a QoS 2 message already routed: acknowledge again, deliver once (4.3.3).
    return client.write({ cmd: 'pubrec', messageId: id, reasonCode: RC.success });
  }
  // Only a 5.0 client is told the receive maximum (in CONNACK); before 5.0 the packet id space bounds it.
  if (
    packet.qos === 2 &&
    client.version === 5 &&
    session.awaitingRelease.size >= client.broker.config.receiveMaximum
  ) {
    throw new MqttProtocolError(
      RC.receiveMaximumExceeded,
      'more QoS 2 messages in flight than the receive maximum',
    );
  }
  const queues = client.broker.queues;
  const published = messageFromPublish(client, {
    topic,
    payload: packet.payload,
    qos: packet.qos,
    retain: packet.retain,
    properties,
    publisherId: client.clientId,
  });
  let reasonCode: number = RC.success;
  let shared: Promise<Error | null> | null = null;
  const allowed = client.permissions.mayPublish(topic);
  // Cluster mode: stored before its acknowledgement when a stream consumer anywhere reads its topic.
  const message =
    allowed && packet.qos > 0 && queues !== null && queues.wants(topic)
      ? { ...published, stored: true }
      : published;
  if (!allowed) {
    client.log.info({ clientId: client.clientId, topic }, 'mqtt publish not authorized');
    // v5 says why; v3 has no way to, so the message is acknowledged and dropped.
    if (client.version === 5) reasonCode = RC.notAuthorized;
  } else {
    const principal = client.principal?.subject ?? null;
    // Before it is routed: its deliveries here come after it.
    if (client.broker.traces.active) {
      tracePublish(client, topic, packet, 'accepted', packet.retain ? 'retained' : null);
    }
    client.broker.topicRates.record(topic);
    const published = client.broker.publish(message, { principal, bridge: true });
    shared = published.shared;
    if (published.reached === 0 && client.version === 5) reasonCode = RC.noMatchingSubscribers;
  }
  if (!allowed && client.broker.traces.active) {
    tracePublish(client, topic, packet, 'refused', `${reasonText(RC.notAuthorized)} (topic rules)`);
  }
  const ackProperties =
    reasonCode === RC.notAuthorized ? { reasonString: 'not authorized to publish here' } : undefined;
  const qos = packet.qos;
  if (qos === 0) return;
  const received = qos === 2 && reasonCode < 0x80;
  if (received) session.awaitingRelease.add(id);
  // Cluster mode, a session that may go on at another node: the id is in its record before PUBREC, so
  // that a resend there (the PUBREC lost with this node) is acknowledged, not routed again.
  const recorded = received && recordsReceipts(client, session);
  if (recorded) client.broker.directory?.changed(session, session.will);
  if (
    !recorded &&
    shared === null &&
    (queues === null || (message.stored !== true && client.acksPending === 0))
  ) {
    return acknowledge(client, qos, id, reasonCode, ackProperties);
  }
  // Cluster mode: acknowledged only once the stream holds what it stores and the retained bucket what it
  // retains, and in the order the client published. Settled into a value at once: a store that fails
  // while an earlier one is pending is never unhandled.
  const stored: Promise<Error | null> =
    message.stored === true && queues !== null
      ? queues.store(message).then(
          () => null,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        )
      : Promise.resolve(null);
  const held = Promise.all([stored, shared]).then(([failure, unshared]) => failure ?? unshared);
  client.acksPending++;
  client.acks = client.acks
    .then(() => held)
    .then(async (failure) => {
      if (failure !== null) throw failure;
      // A record write that failed leaves the id to this node alone: a resend elsewhere is routed again.
      if (recorded) await client.broker.directory?.persisted(session).catch(() => undefined);
      client.acksPending--;
      acknowledge(client, qos, id, reasonCode, ackProperties);
    })
    .catch((err: Error) => {
      client.acksPending--;
      client.log.warn({ clientId: client.clientId, topic, err: err.message }, 'mqtt message not stored');
      session.awaitingRelease.delete(id);
      // Never an acknowledgement for a message that was not stored: v5 hears why, v3 loses the connection.
      if (client.version !== 5) return client.close(CLOSE.internalError, 'message not stored', true);
      acknowledge(client, qos, id, RC.quotaExceeded, {
        reasonString: 'the message could not be stored',
      });
    });
}

function tracePublish(
  client: MqttClient,
  topic: string,
  packet: IPublishPacket,
  outcome: 'accepted' | 'refused' | 'duplicate',
  reason: string | null,
): void {
  const bytes = Buffer.byteLength(packet.payload);
  const publish = { topic, qos: packet.qos, packetId: packet.messageId ?? 0, bytes };
  client.broker.traces.message(publishRecord(client.clientId, publish, outcome, reason), client.clientId);
}

function acknowledge(
  client: MqttClient,
  qos: 1 | 2,
  id: number,
  reasonCode: number,
  properties: { reasonString: string } | undefined,
): void {
  client.write({ cmd: qos === 1 ? 'puback' : 'pubrec', messageId: id, reasonCode, properties });
}

function resolveTopic(client: MqttClient, topic: string, alias: number | undefined): string {
  if (alias === undefined || client.version !== 5) return topic;
  if (alias === 0 || alias > client.broker.config.topicAliasMaximum) {
    throw new MqttProtocolError(
      RC.topicAliasInvalid,
      `topic alias ${alias} is outside 1..${client.broker.config.topicAliasMaximum}`,
    );
  }
  if (topic.length > 0) {
    client.inboundAliases.set(alias, topic);
    return topic;
  }
  const known = client.inboundAliases.get(alias);
  if (known === undefined)
    throw new MqttProtocolError(RC.protocolError, `topic alias ${alias} was never set`);
  return known;
}

function assertTopic(topic: string): void {
  try {
    assertTopicName(topic);
  } catch (err) {
    throw new MqttProtocolError(RC.topicNameInvalid, (err as Error).message);
  }
}

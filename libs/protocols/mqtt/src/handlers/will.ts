import { assertTopicName } from '#broker/bus';
import { type IConnectPacket } from 'mqtt-packet';
import { type MqttClient, type Will } from '../mqtt-client.js';
import { MqttProtocolError, RC } from '../reason-codes.js';
import { messageFromPublish } from './publish.js';

/** The will CONNECT carries, validated like a PUBLISH; null when there is none. */
export function willOf(client: MqttClient, packet: IConnectPacket): Will | null {
  const will = packet.will;
  if (will === undefined) return null;
  try {
    assertTopicName(will.topic);
  } catch (err) {
    throw new MqttProtocolError(RC.topicNameInvalid, (err as Error).message);
  }
  // The expiry counts from when the will is published, not from CONNECT (5.0 section 3.1.3.2.4).
  const { willDelayInterval, messageExpiryInterval, ...properties } = will.properties ?? {};
  const message = messageFromPublish(client, {
    topic: will.topic,
    payload: will.payload,
    qos: will.qos ?? 0,
    retain: will.retain ?? false,
    properties,
    publisherId: packet.clientId,
  });
  const expirySec = client.version === 5 ? (messageExpiryInterval ?? null) : null;
  return { message, delaySec: willDelayInterval ?? 0, expirySec };
}

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
  const { willDelayInterval, ...properties } = will.properties ?? {};
  const message = messageFromPublish(client, {
    topic: will.topic,
    payload: will.payload,
    qos: will.qos ?? 0,
    retain: will.retain ?? false,
    properties,
    publisherId: packet.clientId,
  });
  return { message, delaySec: willDelayInterval ?? 0 };
}

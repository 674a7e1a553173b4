import { type IPublishPacket } from 'mqtt-packet';
import { remainingExpirySec } from './message.js';
import { encodePacket } from './packet-reader.js';
import { type Delivery, type InFlight } from './delivery.js';

/**
 * Topic aliases the broker assigns towards one connection (v5 3.3.2.3.4): the first
 * `maximum` distinct topics get an alias, later sends of them carry the alias and an empty topic.
 */
export class OutboundAliases {
  /** Made with the first alias: most connections never use one. */
  private byTopic: Map<string, number> | null = null;
  maximum = 0;

  /** The alias to use, and whether it is new (the topic must then be sent with it). */
  lookup(topic: string): { alias: number; isNew: boolean } | undefined {
    if (this.maximum === 0) return undefined;
    const known = this.byTopic?.get(topic);
    if (known !== undefined) return { alias: known, isNew: false };
    const used = this.byTopic?.size ?? 0;
    if (used >= this.maximum) return undefined;
    return { alias: used + 1, isNew: true };
  }

  /** Called once the packet carrying a new alias was actually sent. */
  remember(topic: string, alias: number): void {
    (this.byTopic ??= new Map()).set(topic, alias);
  }
}

/** The PUBLISH for a delivery: v5 gets the pass-through properties, remaining expiry, ids and alias. */
export function publishPacket(
  delivery: Delivery | InFlight,
  dup: boolean,
  version: number,
  alias: { alias: number; isNew: boolean } | undefined,
  now: number,
): IPublishPacket {
  const { message } = delivery;
  const packet: IPublishPacket = {
    cmd: 'publish',
    topic: message.topic,
    payload: message.payload,
    qos: delivery.qos,
    retain: delivery.retain,
    dup,
  };
  if ('packetId' in delivery) packet.messageId = delivery.packetId;
  if (version !== 5) return packet;
  const properties: NonNullable<IPublishPacket['properties']> = { ...message.properties };
  const expiry = remainingExpirySec(message, now);
  if (expiry !== undefined) properties.messageExpiryInterval = expiry;
  const ids = delivery.subscriptionIds;
  if (ids.length > 0) properties.subscriptionIdentifier = ids.length === 1 ? (ids[0] as number) : [...ids];
  if (alias !== undefined) {
    properties.topicAlias = alias.alias;
    if (!alias.isNew) packet.topic = '';
  }
  packet.properties = properties;
  return packet;
}

/** The PUBLISH bytes; identical QoS 0 sends of one routed message reuse one encoding. */
export function encodePublish(
  delivery: Delivery | InFlight,
  dup: boolean,
  version: number,
  alias: { alias: number; isNew: boolean } | undefined,
  now: number,
): Buffer {
  const { encodings } = delivery;
  const identical =
    encodings !== undefined &&
    delivery.qos === 0 &&
    alias === undefined &&
    delivery.subscriptionIds.length === 0 &&
    delivery.message.expiresAt === null;
  if (!identical) return encodePacket(publishPacket(delivery, dup, version, alias, now), version);
  const key = `${version}:${delivery.retain}`;
  let bytes = encodings.get(key);
  if (bytes === undefined) {
    bytes = encodePacket(publishPacket(delivery, dup, version, alias, now), version);
    encodings.set(key, bytes);
  }
  return bytes;
}

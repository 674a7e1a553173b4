import { assertTopicName } from '#broker/bus';
import { type QoS } from 'mqtt-packet';
import { type MqttMessage, type PassThroughProperties } from '../message.js';

/** What an encoded message holds besides its payload, as JSON. */
interface Meta {
  readonly topic: string;
  readonly qos: QoS;
  readonly retain: boolean;
  readonly publisherId: string | null;
  readonly expiresAt: number | null;
  readonly properties: Omit<PassThroughProperties, 'correlationData'> & { correlationData?: string };
}

/**
 * A message as bytes for NATS (a KV value, a session record's will): 4 bytes of JSON length, the JSON,
 * then the payload as it came (no base64 on the payload).
 */
export function encodeMessage(message: MqttMessage): Buffer {
  const { correlationData, ...properties } = message.properties;
  const meta: Meta = {
    topic: message.topic,
    qos: message.qos,
    retain: message.retain,
    publisherId: message.publisherId,
    expiresAt: message.expiresAt,
    properties:
      correlationData === undefined
        ? properties
        : { ...properties, correlationData: correlationData.toString('base64') },
  };
  const json = Buffer.from(JSON.stringify(meta), 'utf8');
  const value = Buffer.allocUnsafe(4 + json.byteLength + message.payload.byteLength);
  value.writeUInt32BE(json.byteLength, 0);
  json.copy(value, 4);
  message.payload.copy(value, 4 + json.byteLength);
  return value;
}

/**
 * Only the properties a message carries from publisher to subscriber, each of its type: what comes from
 * NATS is not trusted to be ours (a topic alias or subscription identifier must never reach a client).
 */
function passThrough(raw: Meta['properties'] | undefined): PassThroughProperties | null {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object') return null;
  const out: { -readonly [K in keyof PassThroughProperties]: PassThroughProperties[K] } = {};
  const { payloadFormatIndicator, contentType, responseTopic, correlationData, userProperties } = raw;
  if (typeof payloadFormatIndicator === 'boolean') out.payloadFormatIndicator = payloadFormatIndicator;
  if (typeof contentType === 'string') out.contentType = contentType;
  if (typeof responseTopic === 'string') out.responseTopic = responseTopic;
  if (typeof correlationData === 'string') out.correlationData = Buffer.from(correlationData, 'base64');
  if (typeof userProperties === 'object' && userProperties !== null) {
    const entries = Object.entries(userProperties).filter(
      ([, v]) => typeof v === 'string' || (Array.isArray(v) && v.every((item) => typeof item === 'string')),
    );
    if (entries.length > 0)
      out.userProperties = Object.fromEntries(entries) as Record<string, string | string[]>;
  }
  return out;
}

/** The message a value holds, or null when it is not one of ours. */
export function decodeMessage(value: Uint8Array): MqttMessage | null {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (bytes.byteLength < 4) return null;
  const length = bytes.readUInt32BE(0);
  if (4 + length > bytes.byteLength) return null;
  let meta: Meta;
  try {
    meta = JSON.parse(bytes.subarray(4, 4 + length).toString('utf8')) as Meta;
  } catch {
    return null;
  }
  if (typeof meta?.topic !== 'string' || ![0, 1, 2].includes(meta.qos)) return null;
  try {
    assertTopicName(meta.topic);
  } catch {
    return null;
  }
  const properties = passThrough(meta.properties);
  if (properties === null) return null;
  return {
    topic: meta.topic,
    // A copy: the buffer it came in is not ours to keep.
    payload: Buffer.from(bytes.subarray(4 + length)),
    qos: meta.qos,
    retain: meta.retain === true,
    publisherId: typeof meta.publisherId === 'string' ? meta.publisherId : null,
    expiresAt: typeof meta.expiresAt === 'number' ? meta.expiresAt : null,
    properties,
  };
}

import { isUtf8 } from 'node:buffer';
import { type Packet } from 'mqtt-packet';

/**
 * The two packets that make up most of a QoS 0 or QoS 1 flow, read and written by hand; everything
 * else, and any variant of these that is not the plainest, goes to mqtt-packet. Measured: for a
 * four-byte PUBACK, mqtt-packet's parser makes a dozen calls to its disabled `debug` logger (each an
 * argument array and an `enabled` getter) and walks its state machine, and its generator makes an
 * event emitter and a buffer list for each packet. The packets and bytes here are the ones
 * mqtt-packet makes (the specs compare them).
 */

/** PUBACK: type 4, no flags (MQTT 3.1.1 and 5.0 section 3.4.1). */
const PUBACK = 0x40;
/** PUBLISH: type 3 in the high nibble; DUP, QoS and RETAIN in the low one (section 3.3.1). */
const PUBLISH = 3;

/** The packet `data` holds when it is one of the plain packets read here, alone; else null. */
export function quickRead(data: Buffer, version: number): Packet | null {
  if (data.length === 4 && data[0] === PUBACK && data[1] === 2) return puback(data, version);
  if (version !== 5 && (data[0] as number) >> 4 === PUBLISH) return publishBefore5(data);
  return null;
}

/** The bytes of `packet` when it is one of the plain packets written here; else null. */
export function quickWrite(packet: Packet, version: number): Buffer | null {
  if (packet.cmd !== 'puback') return null;
  const id = packet.messageId;
  if (id === undefined || !Number.isInteger(id) || id < 1 || id > 0xffff) return null;
  // mqtt-packet writes four bytes before 5.0, and in 5.0 for a Success with no properties.
  if (version === 5 && (packet.reasonCode !== 0 || packet.properties !== undefined)) return null;
  return Buffer.from([PUBACK, 2, id >> 8, id & 0xff]);
}

/** A PUBACK of remaining length 2: the packet id; in 5.0 the reason code is then Success. */
function puback(data: Buffer, version: number): Packet {
  const messageId = ((data[2] as number) << 8) | (data[3] as number);
  const packet = {
    cmd: 'puback',
    retain: false,
    qos: 0,
    dup: false,
    length: 2,
    topic: null,
    payload: null,
    messageId,
  };
  return (version === 5 ? { ...packet, reasonCode: 0 } : packet) as Packet;
}

/**
 * A 3.1 or 3.1.1 PUBLISH that fills `data` exactly: topic, packet id when QoS > 0, payload (no
 * properties before 5.0). QoS 3, a length that does not match, a topic or packet id that does not fit:
 * null, and mqtt-packet says what is wrong. The payload shares `data`'s memory, as mqtt-packet's does.
 */
function publishBefore5(data: Buffer): Packet | null {
  const first = data[0] as number;
  const qos = (first >> 1) & 3;
  if (qos === 3) return null;
  let remaining = 0;
  let at = 1;
  for (let shift = 0; ; shift += 7) {
    if (at >= data.length || shift > 21) return null;
    const byte = data[at++] as number;
    remaining += (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
  }
  if (at + remaining !== data.length || remaining < 2) return null;
  const topicEnd = at + 2 + data.readUInt16BE(at);
  const idEnd = qos > 0 ? topicEnd + 2 : topicEnd;
  // Ill-formed UTF-8 in the topic: the strict parser (strict-strings.ts) says so.
  if (idEnd > data.length || !isUtf8(data.subarray(at + 2, topicEnd))) return null;
  const packet: Record<string, unknown> = {
    cmd: 'publish',
    retain: (first & 1) !== 0,
    qos,
    dup: (first & 8) !== 0,
    length: remaining,
    topic: data.toString('utf8', at + 2, topicEnd),
    payload: data.subarray(idEnd),
  };
  if (qos > 0) packet['messageId'] = data.readUInt16BE(topicEnd);
  return packet as unknown as Packet;
}

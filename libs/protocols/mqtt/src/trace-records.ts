import { type TraceRecord } from '#broker/gateway';
import { type Delivery, type InFlight } from './delivery.js';
import { RC } from './reason-codes.js';

/** MQTT's packets as the records of a trace: what happened, to whom, and never a payload's contents. */

const NAMES = new Map<number, string>(
  Object.entries(RC).map(([name, code]) => [code, name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)]),
);

/** A reason code as a trace shows it: '0x87 not authorized'. */
export function reasonText(code: number): string {
  const name = NAMES.get(code);
  return `0x${code.toString(16).padStart(2, '0')}${name === undefined ? '' : ` ${name}`}`;
}

/** A client's packet with no message in it (CONNECT, DISCONNECT, SUBSCRIBE, UNSUBSCRIBE). */
export function clientRecord(
  event: string,
  client: string,
  outcome: string,
  reason: string | null,
  subscription?: { readonly filter: string; readonly qos: number | null; readonly packetId: number },
): TraceRecord {
  return {
    event,
    client,
    topic: subscription?.filter ?? null,
    qos: subscription?.qos ?? null,
    packetId: subscription?.packetId ?? null,
    bytes: null,
    outcome,
    reason,
  };
}

/**
 * A message delivered to (or queued for, or dropped before) `client`; `resent` with DUP at its
 * reconnect, having been in flight when it went away; `expired` in its queue (v5 message expiry).
 */
export function deliveryRecord(
  client: string,
  delivery: Delivery,
  packetId: number | null,
  outcome: 'sent' | 'queued' | 'dropped' | 'resent' | 'expired',
  why: string | null,
): TraceRecord {
  const { message } = delivery;
  return {
    event: 'delivered',
    client,
    topic: message.topic,
    qos: delivery.qos,
    packetId,
    bytes: message.payload.byteLength,
    outcome,
    reason: why ?? (message.publisherId === null ? null : `from ${message.publisherId}`),
  };
}

/** A PUBLISH from `client`, with what became of it. */
export function publishRecord(
  client: string,
  publish: {
    readonly topic: string;
    readonly qos: number;
    readonly packetId: number;
    readonly bytes: number;
  },
  outcome: 'accepted' | 'refused' | 'duplicate',
  reason: string | null,
): TraceRecord {
  return {
    event: 'publish-in',
    client,
    topic: publish.topic,
    qos: publish.qos,
    packetId: publish.qos > 0 ? publish.packetId : null,
    bytes: publish.bytes,
    outcome,
    reason,
  };
}

/** A PUBREL sent again to `client` at its reconnect: the QoS 2 delivery it had received (PUBREC) before it went away. */
export function pubrelRecord(client: string, inflight: InFlight): TraceRecord {
  return {
    event: 'pubrel',
    client,
    topic: inflight.message.topic,
    qos: inflight.qos,
    packetId: inflight.packetId,
    bytes: null,
    outcome: 'resent',
    reason: 'in flight when the client went away',
  };
}

import { decodeMessage, encodeMessage } from './message-codec.js';
import { MAX_CARRIED, type SessionState, type WillRecord } from '../session-state.js';
import { type Subscription } from '../subscription.js';
import { parseFilter } from '../topic-filter.js';

/** A client id longer than this in base64url is not a KV key: such a session stays on its node. */
const MAX_KEY_LENGTH = 2048;
/** A record past this (a huge will, mostly) is written without its will: NATS refuses payloads past 1 MiB. */
export const MAX_RECORD_BYTES = 512 * 1024;

/** A session's record in the bucket: who holds it, and what another node needs to carry it on. */
export interface SessionRecord {
  readonly node: string;
  /** The process of that node that wrote it: a record of an earlier process under the id is an orphan. */
  readonly incarnation: string;
  /** Set by the CONNECT that claimed the id; later writes of that connection keep it. */
  readonly claim: string;
  readonly expirySec: number;
  /**
   * The keep-alive of the connection that holds it (0: none). A node that adopts the record of a node it
   * thinks dead counts the connection lost only after 1.5 times this, as a server does for a silent
   * client: the client may still be connected to a node that is only paused or cut off.
   */
  readonly keepAliveSec: number;
  readonly subscriptions: readonly Subscription[];
  /** Packet ids of QoS 2 deliveries in their PUBREL stage. */
  readonly releasing: readonly number[];
  /** Packet ids of QoS 2 messages the client published, routed and waiting for its PUBREL. */
  readonly receiving: readonly number[];
  readonly lastPacketId: number;
  readonly streamDelivered?: Readonly<Record<string, number>>;
  readonly streamReceived?: readonly number[];
  readonly streamReceivedAt?: readonly number[];
  readonly streamUnconfirmed?: readonly number[];
  readonly will: EncodedWill | null;
}

/** Seconds an adopter waits before it counts the held connection lost (MQTT 3.1.2.10's 1.5 keep-alives). */
export function graceOf(record: SessionRecord): number {
  return Math.ceil(record.keepAliveSec * 1.5);
}

export interface EncodedWill {
  /** The message (message-codec), base64. */
  readonly message: string;
  readonly delaySec: number;
  readonly expirySec: number | null;
  readonly principal: string | null;
}

export function keyOf(clientId: string): string | null {
  const key = Buffer.from(clientId, 'utf8').toString('base64url');
  return key.length <= MAX_KEY_LENGTH ? key : null;
}

export function encodeWill(will: WillRecord | null): EncodedWill | null {
  if (will === null) return null;
  return {
    message: encodeMessage(will.message).toString('base64'),
    delaySec: will.delaySec,
    expirySec: will.expirySec,
    principal: will.principal,
  };
}

export function decodeWill(will: EncodedWill | null): WillRecord | null {
  if (will === null || typeof will?.message !== 'string') return null;
  const message = decodeMessage(Buffer.from(will.message, 'base64'));
  if (message === null) return null;
  const delaySec = Number(will.delaySec);
  return {
    message,
    delaySec: Number.isInteger(delaySec) && delaySec >= 0 ? delaySec : 0,
    expirySec: typeof will.expirySec === 'number' ? will.expirySec : null,
    principal: typeof will.principal === 'string' ? will.principal : null,
  };
}

/** A subscription from NATS, checked as a SUBSCRIBE would be; null for anything else. */
export function subscriptionOf(raw: unknown): Subscription | null {
  const s = raw as Subscription;
  if (typeof s?.raw !== 'string' || ![0, 1, 2].includes(s.qos)) return null;
  let parsed;
  try {
    parsed = parseFilter(s.raw);
  } catch {
    return null;
  }
  const retainHandling = [0, 1, 2].includes(s.retainHandling) ? s.retainHandling : 0;
  const id = s.subscriptionId;
  return {
    raw: s.raw,
    filter: parsed.filter,
    group: parsed.group,
    qos: s.qos,
    noLocal: s.noLocal === true,
    retainAsPublished: s.retainAsPublished === true,
    retainHandling,
    subscriptionId: Number.isInteger(id) && (id as number) > 0 && (id as number) < 268_435_456 ? id : null,
  };
}

/** Packet ids from NATS (a record, another node's answer): integers 1 to 65535, each once; anything else dropped. */
export function packetIdsOf(raw: unknown): number[] {
  if (!Array.isArray(raw)) return [];
  const ids = new Set<number>();
  for (const id of raw.slice(0, 65535))
    if (Number.isInteger(id) && id >= 1 && id <= 65535) ids.add(id as number);
  return [...ids];
}

/** A handed-over `streamDelivered`, each consumer name and sequence checked; others dropped. */
function streamDeliveredOf(raw: unknown): Record<string, number> | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  // The newest consumers last (a session writes them in the order it met them): those are kept.
  const entries = Object.entries(raw as Record<string, unknown>)
    .slice(-MAX_CARRIED)
    .filter(
      (entry): entry is [string, number] =>
        /^mq_[\w-]{1,64}$/.test(entry[0]) && Number.isSafeInteger(entry[1]) && (entry[1] as number) > 0,
    );
  return Object.fromEntries(entries);
}

/**
 * Handed-over received stream messages: each sequence a positive integer, with when it was stored (a
 * non-negative integer, 0 where the record does not say); others dropped.
 */
function receivedOf(
  sequences: unknown,
  times: unknown,
): Pick<SessionState, 'streamReceived' | 'streamReceivedAt'> {
  if (!Array.isArray(sequences)) return {};
  const at = Array.isArray(times) ? times : [];
  const kept = sequences
    .slice(0, MAX_CARRIED)
    .map((sequence: unknown, i) => [sequence, Number.isSafeInteger(at[i]) && at[i] >= 0 ? at[i] : 0] as const)
    .filter(
      (entry): entry is readonly [number, number] =>
        Number.isSafeInteger(entry[0]) && (entry[0] as number) > 0,
    );
  return {
    streamReceived: kept.map(([sequence]) => sequence),
    streamReceivedAt: kept.map(([, storedMs]) => storedMs),
  };
}

export function parseRecord(value: Uint8Array): SessionRecord | null {
  try {
    const record = JSON.parse(Buffer.from(value).toString('utf8')) as SessionRecord;
    if (typeof record?.node !== 'string' || !Array.isArray(record.subscriptions)) return null;
    const expirySec = Number(record.expirySec);
    return {
      node: record.node,
      incarnation: typeof record.incarnation === 'string' ? record.incarnation : '',
      claim: typeof record.claim === 'string' ? record.claim : '',
      expirySec: Number.isInteger(expirySec) && expirySec >= 0 ? expirySec : 0,
      keepAliveSec:
        Number.isInteger(record.keepAliveSec) && record.keepAliveSec > 0 ? record.keepAliveSec : 0,
      subscriptions: record.subscriptions.map(subscriptionOf).filter((s): s is Subscription => s !== null),
      releasing: packetIdsOf(record.releasing),
      receiving: packetIdsOf(record.receiving),
      lastPacketId: packetIdsOf([record.lastPacketId])[0] ?? 0,
      ...carriedOf(record),
      will: record.will ?? null,
    };
  } catch {
    return null;
  }
}

export function stateOf(record: SessionRecord): SessionState {
  const { expirySec, subscriptions, releasing, receiving, lastPacketId } = record;
  return { expirySec, subscriptions, releasing, receiving, lastPacketId, ...carriedOf(record) };
}

/** The stream knowledge a record or a takeover answer carries (`SessionState.streamDelivered`), checked. */
export function carriedOf(raw: {
  readonly streamDelivered?: unknown;
  readonly streamReceived?: unknown;
  readonly streamReceivedAt?: unknown;
  readonly streamUnconfirmed?: unknown;
}): Pick<SessionState, 'streamDelivered' | 'streamReceived' | 'streamReceivedAt' | 'streamUnconfirmed'> {
  const streamDelivered = streamDeliveredOf(raw.streamDelivered);
  const received = receivedOf(raw.streamReceived, raw.streamReceivedAt);
  const known = new Set(received.streamReceived);
  const unconfirmed = Array.isArray(raw.streamUnconfirmed)
    ? raw.streamUnconfirmed.slice(0, MAX_CARRIED).filter((s): s is number => known.has(s as number))
    : [];
  return {
    ...(streamDelivered === undefined ? {} : { streamDelivered }),
    ...received,
    ...(unconfirmed.length === 0 ? {} : { streamUnconfirmed: unconfirmed }),
  };
}

/** JetStream's "wrong last sequence": someone else wrote the record since it was read. */
export function isConflict(err: unknown): boolean {
  return (err as { code?: number }).code === 10071 || /wrong last sequence/i.test((err as Error).message);
}

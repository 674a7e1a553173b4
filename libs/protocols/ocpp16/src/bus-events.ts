import { type BusMessage } from '#broker/bus';

export const BUS_ORIGIN = 'ocpp1.6';

/**
 * A charge point identity as one topic level: `%`, `+` and `#` percent-encoded (identities never
 * hold `/`, control characters or spaces: the handshake refuses those).
 */
export function identityLevel(identity: string): string {
  return identity.replace(/[%+#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `ocpp/<identity>/<Action>`: a dashboard subscribes to `ocpp/+/StatusNotification` or `ocpp/CP-1/#`. */
export function eventTopic(identity: string, event: string): string {
  return `ocpp/${identityLevel(identity)}/${event}`;
}

export interface CallEvent {
  readonly identity: string;
  readonly action: string;
  readonly messageId: string;
  readonly request: unknown;
  readonly response: unknown;
  /** When it was handled; written as an ISO 8601 string, like every time on the bus. */
  readonly at: Date;
}

/**
 * The JSON is written on the first read of `payload`, once: on a bus where no subscriber matches
 * (no dashboard watching), a Heartbeat's event costs a topic, not a serialization.
 */
export function callEventMessage(event: CallEvent): BusMessage {
  let payload: Buffer | null = null;
  return {
    topic: eventTopic(event.identity, event.action),
    get payload(): Buffer {
      payload ??= Buffer.from(JSON.stringify(event));
      return payload;
    },
    contentType: 'application/json',
    origin: BUS_ORIGIN,
    principal: event.identity,
  };
}

/** `ocpp/<identity>/Connected` and `.../Disconnected` (names no 1.6 action has). */
export function connectionEventMessage(
  identity: string,
  event: 'Connected' | 'Disconnected',
  detail: Readonly<Record<string, unknown>>,
  at: Date,
): BusMessage {
  return {
    topic: eventTopic(identity, event),
    payload: Buffer.from(JSON.stringify({ identity, event, at: at.toISOString(), ...detail })),
    contentType: 'application/json',
    origin: BUS_ORIGIN,
    principal: identity,
  };
}

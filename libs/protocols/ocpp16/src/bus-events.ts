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

/**
 * One charge point's event topics, each built once per connection. A topic built anew for each CALL
 * is a concatenated string, which the bus's topic check copies into a flat one before scanning it, at
 * every CALL. The actions are those the
 * session admitted, so the map holds at most the 1.6 actions.
 */
export class EventTopics {
  private readonly prefix: string;
  private readonly topics = new Map<string, string>();

  constructor(identity: string) {
    this.prefix = eventTopic(identity, '');
  }

  of(action: string): string {
    let topic = this.topics.get(action);
    if (topic === undefined) {
      topic = this.prefix + action;
      this.topics.set(action, topic);
    }
    return topic;
  }
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
 * A handled CALL on the bus. The JSON is written on the first read of `payload`, once: on a bus where
 * no subscriber matches (no dashboard watching), a Heartbeat's event costs a topic, not a
 * serialization. A class, not an object literal with a getter: a literal defines its accessor anew
 * for every message, on the path of every CALL.
 */
export class CallEventMessage implements BusMessage {
  readonly topic: string;
  readonly contentType = 'application/json';
  readonly origin = BUS_ORIGIN;
  readonly principal: string;
  private json: Buffer | null = null;

  /** `topic`: from the connection's EventTopics. */
  constructor(
    private readonly event: CallEvent,
    topic: string = eventTopic(event.identity, event.action),
  ) {
    this.topic = topic;
    this.principal = event.identity;
  }

  get payload(): Buffer {
    this.json ??= Buffer.from(JSON.stringify(this.event));
    return this.json;
  }
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

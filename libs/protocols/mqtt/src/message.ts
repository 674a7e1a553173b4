import { type QoS } from 'mqtt-packet';

/** The v5 publish properties a message carries from publisher to subscribers unchanged. */
export interface PassThroughProperties {
  payloadFormatIndicator?: boolean;
  contentType?: string;
  responseTopic?: string;
  correlationData?: Buffer;
  userProperties?: Record<string, string | string[]>;
}

/** An application message inside the broker, whatever its source (client, will, bus, $SYS). */
export interface MqttMessage {
  readonly topic: string;
  readonly payload: Buffer;
  readonly qos: QoS;
  readonly retain: boolean;
  /** Client id of the publisher (for v5 no-local); null when it did not come from an MQTT client. */
  readonly publisherId: string | null;
  /** Epoch milliseconds after which the message is not delivered (v5 message expiry); null: never. */
  readonly expiresAt: number | null;
  readonly properties: PassThroughProperties;
  /**
   * Cluster mode: the publisher's node stores it in the message stream, so a subscription the stream
   * feeds gets it from there and not from the bus. Absent: not stored.
   */
  readonly stored?: boolean;
}

export function isExpired(message: MqttMessage, now: number): boolean {
  return message.expiresAt !== null && message.expiresAt <= now;
}

/** What is left of the message's expiry interval, in whole seconds rounded up (v5 3.3.2.3.3). */
export function remainingExpirySec(message: MqttMessage, now: number): number | undefined {
  if (message.expiresAt === null) return undefined;
  return Math.max(1, Math.ceil((message.expiresAt - now) / 1000));
}

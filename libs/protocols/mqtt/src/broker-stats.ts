/** Counters behind `$SYS/broker/...`; the broker core bumps them, the $SYS publisher reads them. */
export class BrokerStats {
  /** Milliseconds since the epoch, from the broker's clock. */
  constructor(readonly startedAt: number) {}

  messagesReceived = 0;
  messagesSent = 0;
  publishReceived = 0;
  publishSent = 0;
  publishDropped = 0;
  bytesReceived = 0;
  bytesSent = 0;
}

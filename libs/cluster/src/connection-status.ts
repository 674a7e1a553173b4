import { type NatsConnection } from '@nats-io/nats-core';
import { type Logger } from 'pino';

/** Where a node's NATS connection stands: up, lost and dialling again, or lost (or closed). */
export type NatsState = 'connected' | 'reconnecting' | 'disconnected';

/**
 * Whether this node's NATS connection is up, as its status events tell, and who hears when that
 * changes (listeners are told after the node has done its own part of a reconnect).
 */
export class ConnectionStatus {
  private readonly listeners = new Set<(connected: boolean) => void>();
  private up = true;
  private now: NatsState = 'connected';
  /** performance.now() when the connection was last made: at construction (the node connected first), then each reconnect. */
  private connectedAt = performance.now();

  constructor(private readonly logger: Logger) {}

  get connected(): boolean {
    return this.up;
  }

  get state(): NatsState {
    return this.now;
  }

  /** Milliseconds since the connection was last made (connected or reconnected). */
  connectedAgoMs(): number {
    return Math.round(performance.now() - this.connectedAt);
  }

  /** Called when the NATS connection goes (false) and comes back (true); returns the unsubscribe. */
  onConnection(listener: (connected: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Follows `nc`'s status; `lost` runs when the connection goes and `restored` when it is back, each
   * before the listeners hear of it.
   */
  watch(nc: NatsConnection, lost: () => void, restored: () => void): void {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'reconnecting' && !this.up) this.now = 'reconnecting';
        else if (status.type === 'close') this.now = 'disconnected';
        if (status.type === 'disconnect' && this.up) {
          this.up = false;
          this.now = 'disconnected';
          this.logger.error('NATS connection lost: new connections get 503 until it is back');
          lost();
          this.emit(false);
        } else if (status.type === 'reconnect' && !this.up) {
          this.up = true;
          this.now = 'connected';
          this.connectedAt = performance.now();
          this.logger.info('NATS connection restored');
          restored();
          this.emit(true);
        }
      }
    })();
  }

  private emit(connected: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(connected);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'cluster connection listener failed');
      }
    }
  }
}

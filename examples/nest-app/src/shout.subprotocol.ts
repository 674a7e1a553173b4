import { Inject } from '@nestjs/common';
import {
  BROKER_CONFIG,
  type BrokerConfig,
  Subprotocol,
  TOPIC_BUS,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
  type TopicBus,
} from 'ws-protocol-broker';
import { ShoutBoard } from './shout-board.js';
import { SHOUT_CONFIG } from './shout.config.js';

/**
 * The application's own raw subprotocol: every text message comes back in capitals, and is
 * published on the broker's bus under `shout/<user>`, where any other module can read it; the
 * dashboard counts them (ShoutBoard).
 */
@Subprotocol({ name: 'shout.v1', onUnsupported: 'reject', messages: 'text', maxPayload: 4096 })
export class ShoutSubprotocol implements SubprotocolHandler {
  private readonly maxLength: number;

  constructor(
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    private readonly board: ShoutBoard,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.maxLength = SHOUT_CONFIG.of(config).maxLength;
  }

  open(connection: Connection, context: ConnectionContext): void {
    const user = context.principal?.subject ?? 'anonymous';
    connection.onMessage((data) => {
      const text = data.toString('utf8');
      if (text.trim() === '') return connection.close(4400, 'empty message');
      if (text.length > this.maxLength)
        return connection.close(4413, `longer than ${this.maxLength} characters`);
      const loud = text.toUpperCase();
      connection.send(loud);
      this.board.shouted(user).catch(() => connection.close(1011, 'shout not recorded'));
      this.bus.publish({ topic: `shout/${user}`, payload: Buffer.from(loud), origin: 'shout.v1' });
    });
  }
}

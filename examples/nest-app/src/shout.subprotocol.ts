import { Inject } from '@nestjs/common';
import {
  Subprotocol,
  TOPIC_BUS,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
  type TopicBus,
} from 'ws-protocol-broker';
import { ShoutBoard } from './shout-board.js';

/**
 * The application's own raw subprotocol: every text message comes back in capitals, and is
 * published on the broker's bus under `shout/<user>`, where any other module can read it; the
 * dashboard counts them (ShoutBoard).
 */
@Subprotocol({ name: 'shout.v1', onUnsupported: 'reject', messages: 'text', maxPayload: 4096 })
export class ShoutSubprotocol implements SubprotocolHandler {
  constructor(
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    private readonly board: ShoutBoard,
  ) {}

  open(connection: Connection, context: ConnectionContext): void {
    const user = context.principal?.subject ?? 'anonymous';
    connection.onMessage((data) => {
      const text = data.toString('utf8');
      if (text.trim() === '') return connection.close(4400, 'empty message');
      const loud = text.toUpperCase();
      connection.send(loud);
      this.board.shouted(user).catch(() => connection.close(1011, 'shout not recorded'));
      this.bus.publish({ topic: `shout/${user}`, payload: Buffer.from(loud), origin: 'shout.v1' });
    });
  }
}

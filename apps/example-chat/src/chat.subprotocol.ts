import { Inject } from '@nestjs/common';
import {
  Subprotocol,
  TOPIC_BUS,
  TopicAuthorizer,
  type BusSubscription,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
  type TopicBus,
} from 'ws-protocol-broker';
import { CHAT_ORIGIN, chatEventOf, parseChatCommand } from './chat-protocol.js';

const MAX_ROOMS_PER_CONNECTION = 32;

/**
 * The extension example: a JSON chat whose rooms are bus topics (`chat/<room>`), so anything else
 * on the bus (another module, another node later) can read and write the rooms.
 */
@Subprotocol({ name: 'chat.v1', onUnsupported: 'reject', messages: 'text', maxPayload: 16 * 1024 })
export class ChatSubprotocol implements SubprotocolHandler {
  constructor(
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    @Inject(TopicAuthorizer) private readonly authorizer: TopicAuthorizer,
  ) {}

  open(connection: Connection, context: ConnectionContext): void {
    const user = context.principal?.subject ?? `guest-${context.id}`;
    const rooms = new Map<string, BusSubscription>();
    // A room is a bus topic: the broker's topic rules and the principal's scopes say who joins and speaks.
    const topics = this.authorizer.grantFor({ principal: context.principal, clientId: null });
    const send = (message: object): void => connection.send(JSON.stringify(message));

    send({ type: 'welcome', user });
    connection.onMessage((data) => {
      const command = parseChatCommand(data.toString('utf8'));
      if ('error' in command) return send({ type: 'error', reason: command.error });
      const topic = `chat/${command.room}`;
      switch (command.type) {
        case 'join':
          if (rooms.has(command.room)) return;
          if (!topics.maySubscribe(topic))
            return send({ type: 'error', reason: `not authorized to join ${command.room}` });
          if (rooms.size >= MAX_ROOMS_PER_CONNECTION) {
            return send({
              type: 'error',
              reason: `at most ${MAX_ROOMS_PER_CONNECTION} rooms per connection`,
            });
          }
          rooms.set(
            command.room,
            this.bus.subscribe(topic, (message) => connection.sendEvent(chatEventOf(command.room, message))),
          );
          return send({ type: 'joined', room: command.room });
        case 'leave':
          rooms.get(command.room)?.unsubscribe();
          rooms.delete(command.room);
          return send({ type: 'left', room: command.room });
        case 'say':
          if (!rooms.has(command.room)) return send({ type: 'error', reason: `join ${command.room} first` });
          if (!topics.mayPublish(topic))
            return send({ type: 'error', reason: `not authorized to speak in ${command.room}` });
          this.bus.publish({
            topic,
            payload: Buffer.from(
              JSON.stringify({ type: 'message', room: command.room, user, text: command.text }),
            ),
            contentType: 'application/json',
            origin: CHAT_ORIGIN,
            principal: context.principal?.subject ?? null,
          });
      }
    });
    connection.onClose(() => {
      for (const subscription of rooms.values()) subscription.unsubscribe();
      rooms.clear();
    });
  }
}

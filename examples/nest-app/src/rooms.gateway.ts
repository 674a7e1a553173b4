import { UsePipes, ValidationPipe } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  type OnGatewayConnection,
  SubscribeMessage,
  WebSocketGateway,
  WebSocketServer,
  WsException,
} from '@nestjs/websockets';
import { IsString, Length } from 'class-validator';
import { type ConnectionContext, type GatewayClient, type GatewayServer } from 'ws-protocol-broker';

export class SayDto {
  @IsString()
  @Length(1, 200)
  text!: string;
}

/** An ordinary Nest gateway; the broker's handshake decides who reaches it, on /rooms/:room. */
@WebSocketGateway({ subprotocol: { name: 'rooms.v1', onUnsupported: 'reject' } })
@UsePipes(
  new ValidationPipe({
    exceptionFactory: (errors) =>
      new WsException(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; ')),
  }),
)
export class RoomsGateway implements OnGatewayConnection {
  @WebSocketServer() server!: GatewayServer;

  handleConnection(client: GatewayClient, context: ConnectionContext): void {
    client.emit('joined', { room: context.params['room'], user: context.principal?.subject ?? null });
  }

  @SubscribeMessage('say')
  say(@MessageBody() body: SayDto, @ConnectedSocket() client: GatewayClient): void {
    const room = client.context.params['room'];
    for (const other of this.server.clients) {
      if (other.context.params['room'] === room) other.emit('said', { text: body.text });
    }
  }
}

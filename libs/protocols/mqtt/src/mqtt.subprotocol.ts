import { Injectable } from '@nestjs/common';
import {
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
} from '#broker/gateway';
import { type MqttClient } from './mqtt-client.js';
import { MqttServer } from './mqtt-server.js';

/** The largest WebSocket message accepted; packets may span messages, so this is not the packet limit. */
const MAX_FRAME = 1024 * 1024;

/** MQTT over WebSocket (MQTT 5 section 6): binary frames, each outgoing packet in its own frame. */
// Injectable here so both subclasses inherit the constructor's parameter metadata.
@Injectable()
abstract class MqttOverWebSocket implements SubprotocolHandler {
  private readonly clients = new Map<string, MqttClient>();

  constructor(private readonly server: MqttServer) {}

  open(connection: Connection, context: ConnectionContext): void {
    const client = this.server.open(
      {
        write: (bytes) => connection.send(bytes),
        end: (code, reason) => connection.close(code, reason),
      },
      {
        transport: 'ws',
        remoteAddress: context.remoteAddress,
        principal: context.principal,
        authRequired: context.authMode === 'required',
        verifyToken: (token) => context.verifyToken(token),
        identify: (principal) => context.identify(principal),
      },
    );
    this.clients.set(connection.id, client);
    connection.onMessage((data) => client.receive(data));
    connection.onClose(() => {
      this.clients.delete(connection.id);
      client.transportClosed();
    });
  }

  goodbye(connection: Connection): void {
    this.clients.get(connection.id)?.goodbye(false);
  }
}

@Subprotocol({
  name: 'mqtt',
  onUnsupported: 'reject',
  messages: 'binary',
  maxPayload: MAX_FRAME,
  ownFirstMessageAuth: true,
})
export class MqttSubprotocol extends MqttOverWebSocket {}

/** The name MQTT 3.1 clients offer (`mqttv3.1`); same broker, same sessions. */
@Subprotocol({
  name: 'mqttv3.1',
  onUnsupported: 'reject',
  messages: 'binary',
  maxPayload: MAX_FRAME,
  ownFirstMessageAuth: true,
})
export class Mqtt31Subprotocol extends MqttOverWebSocket {}

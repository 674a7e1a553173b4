import { Injectable } from '@nestjs/common';
import {
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type FirstMessageCredential,
  type FirstMessageOutcome,
  type SubprotocolHandler,
} from '#broker/gateway';
import { type HoldLimits } from '#broker/kit';
import { type ClientContext, type MqttTransport } from './client-context.js';
import { type MqttClient } from './mqtt-client.js';
import { MqttServer } from './mqtt-server.js';

/** The largest WebSocket message accepted; packets may span messages, so this is not the packet limit. */
const MAX_FRAME = 1024 * 1024;

/**
 * An MQTT client's WebSocket: whole packets out through the gateway's connection, and what the
 * handshake established. One object with methods, not six closures, per connection.
 */
class WebSocketLink implements MqttTransport, ClientContext {
  readonly transport = 'ws';
  readonly remoteAddress: string;
  readonly connectionId: string;

  constructor(
    private readonly connection: Connection,
    private readonly context: ConnectionContext,
  ) {
    this.remoteAddress = context.remoteAddress;
    this.connectionId = connection.id;
  }

  get holdLimits(): HoldLimits {
    return this.context.holdLimits;
  }

  send(bytes: Buffer): void {
    this.connection.send(bytes);
  }

  buffered(): number {
    return this.connection.bufferedAmount;
  }

  charge(ms: number): void {
    this.connection.charge(ms);
  }

  close(code: number, reason: string): void {
    this.connection.close(code, reason);
  }

  authenticate(credential: FirstMessageCredential | null): Promise<FirstMessageOutcome> {
    return this.context.authenticate(credential);
  }
}

/** MQTT over WebSocket (MQTT 5 section 6): binary frames, each outgoing packet in its own frame. */
// Injectable here so both subclasses inherit the constructor's parameter metadata.
@Injectable()
abstract class MqttOverWebSocket implements SubprotocolHandler {
  private readonly clients = new Map<string, MqttClient>();

  constructor(private readonly server: MqttServer) {}

  open(connection: Connection, context: ConnectionContext): void {
    const link = new WebSocketLink(connection, context);
    const client = this.server.open(link, link);
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

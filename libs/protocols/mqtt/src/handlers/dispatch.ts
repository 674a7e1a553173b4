import { type Packet } from 'mqtt-packet';
import { type MqttClient } from '../mqtt-client.js';
import { MqttProtocolError, RC } from '../reason-codes.js';
import { handlePuback, handlePubcomp, handlePubrec, handlePubrel } from './acks.js';
import { handleConnect } from './connect.js';
import { handleDisconnect } from './disconnect.js';
import { handlePublish } from './publish.js';
import { handleSubscribe } from './subscribe.js';
import { handleUnsubscribe } from './unsubscribe.js';

/** Routes one packet to its handler; anything out of order is a protocol error. */
export function dispatch(client: MqttClient, packet: Packet): void {
  if (packet.cmd === 'connect') return handleConnect(client, packet);
  if (client.state !== 'connected') {
    throw new MqttProtocolError(RC.protocolError, `${packet.cmd} before CONNECT`);
  }
  switch (packet.cmd) {
    case 'publish':
      return handlePublish(client, packet);
    case 'puback':
      return handlePuback(client, packet);
    case 'pubrec':
      return handlePubrec(client, packet);
    case 'pubrel':
      return handlePubrel(client, packet);
    case 'pubcomp':
      return handlePubcomp(client, packet);
    case 'subscribe':
      return handleSubscribe(client, packet);
    case 'unsubscribe':
      return handleUnsubscribe(client, packet);
    case 'pingreq':
      return client.write({ cmd: 'pingresp' });
    case 'disconnect':
      return handleDisconnect(client, packet);
    case 'auth':
      throw new MqttProtocolError(RC.protocolError, 'enhanced authentication (AUTH) is not supported');
    default:
      throw new MqttProtocolError(RC.protocolError, `a client must not send ${packet.cmd}`);
  }
}

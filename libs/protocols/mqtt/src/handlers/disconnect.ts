import { type IDisconnectPacket } from 'mqtt-packet';
import { CLOSE } from '#broker/kit';
import { type MqttClient } from '../mqtt-client.js';
import { MqttProtocolError, RC } from '../reason-codes.js';

/** The client's goodbye: v5 may change the session expiry here and keep its will. */
export function handleDisconnect(client: MqttClient, packet: IDisconnectPacket): void {
  const session = client.session;
  const expiry = packet.properties?.sessionExpiryInterval;
  if (client.version === 5 && expiry !== undefined && session !== null) {
    // 3.14.2.2.2: a session that was to end with the connection cannot be extended here.
    if (session.expirySec === 0 && expiry > 0) {
      throw new MqttProtocolError(
        RC.protocolError,
        'session expiry cannot be set on DISCONNECT when it was 0',
      );
    }
    session.expirySec = Math.min(expiry, client.broker.config.maxSessionExpirySec);
  }
  // Only a normal disconnection (0x00) discards the will (v5 3.1.2.5): 0x04 and client errors keep it.
  client.close(CLOSE.normal, 'client disconnected', (packet.reasonCode ?? RC.success) !== RC.success);
}

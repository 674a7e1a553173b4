import { type IUnsubscribePacket } from 'mqtt-packet';
import { type MqttClient } from '../mqtt-client.js';
import { MqttProtocolError, RC } from '../reason-codes.js';
import { type Session } from '../mqtt-session.js';
import { requirePacketId } from './packet-id.js';
import { clientRecord, reasonText } from '../trace-records.js';

export function handleUnsubscribe(client: MqttClient, packet: IUnsubscribePacket): void {
  const id = requirePacketId(packet.messageId, 'UNSUBSCRIBE');
  if (packet.unsubscriptions.length === 0) {
    throw new MqttProtocolError(RC.malformed, 'an UNSUBSCRIBE without a topic filter (MQTT-3.10.3-2)');
  }
  const session = client.session as Session;
  const granted = packet.unsubscriptions.map((raw) =>
    client.broker.unsubscribe(session, raw) ? RC.success : RC.noSubscriptionExisted,
  );
  if (client.broker.traces.active) {
    packet.unsubscriptions.forEach((filter, i) => {
      const code = granted[i] as number;
      const outcome = code === RC.success ? 'removed' : 'none';
      const unsubscribed = { filter, qos: null, packetId: id };
      client.broker.traces.client(
        clientRecord('unsubscribe', client.clientId, outcome, reasonText(code), unsubscribed),
      );
    });
  }
  client.write(
    client.version === 5
      ? { cmd: 'unsuback', messageId: id, granted }
      : { cmd: 'unsuback', messageId: id, granted: [] },
  );
}

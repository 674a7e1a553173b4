import { type MqttClient } from '../mqtt-client.js';
import { type Session } from '../mqtt-session.js';

/**
 * Whether a QoS 2 receipt of this session must be in its record before it is acknowledged (PUBREC)
 * or forgotten (PUBCOMP): in a cluster, for a session that outlives its connection and so may resume
 * on another node. A clean session ends with its connection, and its client forgets its ids too.
 */
export function recordsReceipts(client: MqttClient, session: Session): boolean {
  return client.broker.directory !== null && session.expirySec > 0;
}

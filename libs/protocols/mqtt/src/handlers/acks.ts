import { type IPubackPacket, type IPubcompPacket, type IPubrecPacket, type IPubrelPacket } from 'mqtt-packet';
import { type MqttClient } from '../mqtt-client.js';
import { RC } from '../reason-codes.js';
import { type InFlight, type Settle } from '../delivery.js';
import { type Session } from '../mqtt-session.js';
import { requirePacketId } from './packet-id.js';
import { recordsReceipts } from './qos2-receipts.js';

function sessionOf(client: MqttClient): Session {
  return client.session as Session;
}

/** QoS 1 delivery done. An unknown id is ignored: it may be an ack for a message already given up. */
export function handlePuback(client: MqttClient, packet: IPubackPacket): void {
  const id = requirePacketId(packet.messageId, 'PUBACK');
  const session = sessionOf(client);
  const inflight = session.inflight.get(id);
  if (inflight?.qos !== 1) return;
  session.inflight.delete(id);
  inflight.settle?.(true);
  client.broker.pump(session);
}

/** QoS 2 step two: release, unless the client refused the message with an error reason code. */
export function handlePubrec(client: MqttClient, packet: IPubrecPacket): void {
  const id = requirePacketId(packet.messageId, 'PUBREC');
  const session = sessionOf(client);
  const inflight = session.inflight.get(id);
  if (inflight?.qos !== 2) {
    return client.write({ cmd: 'pubrel', messageId: id, reasonCode: RC.packetIdNotFound });
  }
  // Again: its PUBREL comes once the record holds the stage, or went already (then once more).
  if (inflight.state === 'pubrec') return;
  if (inflight.state === 'pubrel') return client.sendPubrel(id);
  if ((packet.reasonCode ?? 0) >= 0x80) {
    inflight.settle?.(true);
    session.inflight.delete(id);
    return client.broker.pump(session);
  }
  if (inflight.streamSequence !== undefined)
    session.received(inflight.streamSequence, id, inflight.streamStoredMs);
  const settle = inflight.settle;
  const directory = client.broker.directory;
  if (settle !== undefined && directory !== null) {
    inflight.state = 'pubrec';
    void releaseWhenRecorded(client, session, inflight, settle);
    return;
  }
  inflight.state = 'pubrel';
  void settle?.(true);
  client.sendPubrel(id);
}

/** How long a PUBREL stage that NATS did not take waits before its record is written again. */
const RECORD_RETRY_MS = 500;

/**
 * Cluster mode, a stream message's PUBREC: the stream's part ends here, and from now on only the PUBREL
 * exchange remains, which the session keeps. The stream lets go of the message only once the session's
 * record holds this stage (written, not merely tried: a write NATS did not take is tried again), so
 * whichever node serves the client next sends the PUBREL. A node that dies before, or whose session
 * moves, leaves the message to the stream, to send again under this packet id, which the client still
 * holds. The PUBREL waits for the stream's confirmation: a client that completed the message must never
 * be sent it again. Until then the in-flight is in its 'pubrec' stage, which a reconnect does not resume:
 * a PUBREL sent then would let the client complete a message that no written record shows it received,
 * and a node adopting the session from the record would send it again as new.
 */
async function releaseWhenRecorded(
  client: MqttClient,
  session: Session,
  inflight: InFlight,
  settle: Settle,
): Promise<void> {
  const { directory, clock } = client.broker;
  for (let attempt = 1; ; attempt++) {
    directory?.changed(session, session.will);
    const outcome = (await directory?.persisted(session)) ?? 'written';
    // Another node holds the session now (this one was paused or cut off), or the stage is over.
    if (outcome === 'moved' || session.inflight.get(inflight.packetId) !== inflight) return;
    if (outcome === 'written') break;
    if (attempt === 1) {
      client.log.warn(
        { clientId: session.clientId, packetId: inflight.packetId },
        'mqtt: a QoS 2 release waits until the session record is written',
      );
    }
    await new Promise<void>((resolve) => clock.after(RECORD_RETRY_MS, resolve));
  }
  await settle(true);
  if (session.inflight.get(inflight.packetId) !== inflight) return;
  // To whichever connection has the session now; with none, the next one gets it on resuming.
  inflight.state = 'pubrel';
  session.owner?.sendPubrel(inflight.packetId);
}

/** Inbound QoS 2 done: the id may be used again. */
export function handlePubrel(client: MqttClient, packet: IPubrelPacket): void {
  const id = requirePacketId(packet.messageId, 'PUBREL');
  const session = sessionOf(client);
  const known = session.awaitingRelease.delete(id);
  const complete = (): void =>
    client.write({ cmd: 'pubcomp', messageId: id, reasonCode: known ? RC.success : RC.packetIdNotFound });
  if (!known || !recordsReceipts(client, session)) {
    if (client.acksPending === 0) return complete();
    // Behind acknowledgements still waiting for the stream or the record: in the order of the packets.
    client.acks = client.acks.then(complete);
    return;
  }
  // The record forgets the id before PUBCOMP: once the client may reuse it, no node may take a new
  // PUBLISH with it for a resend.
  const directory = client.broker.directory;
  directory?.changed(session, session.will);
  client.acksPending++;
  client.acks = client.acks
    .then(() => directory?.persisted(session))
    .catch(() => undefined)
    .then(() => {
      client.acksPending--;
      complete();
    });
}

export function handlePubcomp(client: MqttClient, packet: IPubcompPacket): void {
  const id = requirePacketId(packet.messageId, 'PUBCOMP');
  const session = sessionOf(client);
  if (session.inflight.get(id)?.state !== 'pubrel') return;
  session.inflight.delete(id);
  // The record forgets the stage too (a PUBREL sent again for it after a move is answered 0x92, harmless).
  client.broker.directory?.changed(session, session.will);
  client.broker.pump(session);
}

import { MqttClient } from '../mqtt-client.js';
import { type Session } from '../mqtt-session.js';

/** An MQTT session as the admin API shows it (GET /admin/v1/mqtt/sessions/:clientId). */
export interface MqttSessionView {
  readonly clientId: string;
  /** The node holding it in cluster mode; null on a single broker. */
  readonly node: string | null;
  /** Its connection while it has one; DELETE /admin/v1/connections/:id closes a WebSocket one. */
  readonly connection: {
    readonly id: string | null;
    readonly transport: 'ws' | 'tcp';
    readonly remoteAddress: string;
    readonly protocolVersion: number;
    readonly principal: string | null;
  } | null;
  /** Seconds it outlives its connection (0: it ends with it). */
  readonly expirySec: number;
  readonly subscriptions: readonly { readonly filter: string; readonly qos: number }[];
  /** QoS 1/2 messages waiting for a packet id or for the client to come back. */
  readonly queued: number;
  /** QoS 1/2 messages sent and not yet acknowledged. */
  readonly inflight: number;
  /**
   * Cluster mode: QoS 1/2 messages the cluster's stream holds for its own subscriptions (not yet sent
   * to it, or sent and not acknowledged), wherever its client is; null on a single node, or when the
   * stream did not say.
   */
  readonly stream: number | null;
  /** QoS 2 messages from the client received and not yet released. */
  readonly awaitingRelease: number;
  /** Its will, without the payload. */
  readonly will: {
    readonly topic: string;
    readonly qos: number;
    readonly retain: boolean;
    readonly delaySec: number;
  } | null;
}

export function sessionView(session: Session, node: string | null): MqttSessionView {
  const client = session.owner instanceof MqttClient ? session.owner : null;
  const will = client?.will ?? session.will;
  return {
    clientId: session.clientId,
    node,
    connection:
      client === null
        ? null
        : {
            id: client.context.connectionId,
            transport: client.context.transport,
            remoteAddress: client.context.remoteAddress,
            protocolVersion: client.version,
            principal: client.principal?.subject ?? null,
          },
    expirySec: session.expirySec,
    subscriptions: [...session.subscriptions.values()].map((s) => ({ filter: s.raw, qos: s.qos })),
    queued: session.queuedCount,
    inflight: session.inflightCount,
    stream: null,
    awaitingRelease: session.awaitingRelease.size,
    will:
      will === null
        ? null
        : {
            topic: will.message.topic,
            qos: will.message.qos,
            retain: will.message.retain,
            delaySec: will.delaySec,
          },
  };
}

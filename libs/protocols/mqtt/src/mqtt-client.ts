import { TopicGrant } from '#broker/auth';
import { CLOSE, HeldInput, type TimerHandle } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type Packet } from 'mqtt-packet';
import { type MqttBroker } from './mqtt-broker.js';
import { closeCodeFor, type ClientContext, type MqttTransport } from './client-context.js';
import { type MqttMessage } from './message.js';
import { encodePublish, OutboundAliases } from './outbound-publish.js';
import { encodePacket, type PacketHandler, PacketReader, packetSize } from './packet-reader.js';
import { MqttProtocolError, RC, V3_CONNACK } from './reason-codes.js';
import { type Delivery, type InFlight } from './delivery.js';
import { type Session, type SessionOwner } from './mqtt-session.js';
import { type WillRecord } from './session-state.js';
import { clientRecord } from './trace-records.js';

/** The slice of pino the core logs through. */
export interface MqttLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A will from CONNECT, kept until the connection ends. */
export interface Will {
  /** Without an expiry: that starts when the will is published. */
  readonly message: MqttMessage;
  readonly delaySec: number;
  /** The will's message expiry interval, or null for none. */
  readonly expirySec: number | null;
}

/** Packets that may carry a reason string and user properties only when the client asked for them. */
const PROBLEM_INFO_FREE = new Set(['publish', 'connack', 'disconnect']);

/** The keep-alive timer's callback, shared by every client (a closure each would stay for the connection's life). */
function keepAliveExpired(client: MqttClient): void {
  client.disconnect(RC.keepAliveTimeout, 'keep alive timeout');
}

/**
 * What may wait behind a packet handled over several turns of the loop (a SUBSCRIBE of many filters):
 * generous, for a client that publishes right behind its SUBSCRIBE, and bounded, for one that floods.
 */
const BEHIND_BUSY_LIMITS = { maxQueued: 1000, maxBytes: 1024 * 1024 };

function connectExpired(client: MqttClient): void {
  client.close(CLOSE.policyViolation, 'no CONNECT in time', false);
}

/**
 * Handles one packet of a client (`handlers/dispatch.ts`). The server hands it to each client, so that
 * the client, which every handler knows, imports none of them.
 */
export type PacketDispatch = (client: MqttClient, packet: Packet) => void;

/**
 * One MQTT network connection, sans-IO: bytes in through `receive`, packets out through the
 * transport, one handler per packet type (handlers/). It owns its session while connected.
 */
export class MqttClient implements SessionOwner, PacketHandler {
  state: 'connecting' | 'authenticating' | 'connected' | 'closed' = 'connecting';
  version = 4;
  clientId = '';
  session: Session | null = null;
  principal: Principal | null = null;
  /** What its principal may do on the bus: set by CONNECT. */
  permissions = TopicGrant.unrestricted;
  will: Will | null = null;
  /** The will as the cluster's directory keeps it (null: none, or one this client may not publish). */
  willRecord: WillRecord | null = null;
  /** What the client announced in its v5 CONNECT. */
  clientReceiveMaximum = 65535;
  clientMaxPacketSize = Number.POSITIVE_INFINITY;
  problemInfo = true;
  /** Topic aliases the client set (v5), made with the first: most clients never use one. */
  private inboundAliasTable: Map<number, string> | null = null;
  /** Packets pipelined behind CONNECT, held while its credential is checked. */
  readonly held: HeldInput<Packet>;
  /** A packet is being handled over several turns (`hold`): the packets behind it wait in `behind`. */
  private busy = false;
  /** Made by the first packet that has to wait: most clients never send one. */
  private behind: HeldInput<Packet> | null = null;
  /** Cluster mode: the acknowledgements of QoS 1/2 publishes, in order, each after its message is stored. */
  acks: Promise<void> = Promise.resolve();
  /** Acknowledgements chained on `acks` and not sent yet: with none, one that waits on nothing goes at once. */
  acksPending = 0;
  readonly outboundAliases = new OutboundAliases();
  private readonly reader: PacketReader;
  private keepAliveTimer: TimerHandle | null = null;
  private connectTimer: TimerHandle | null;

  get inboundAliases(): Map<number, string> {
    return (this.inboundAliasTable ??= new Map());
  }

  constructor(
    readonly broker: MqttBroker,
    private readonly transport: MqttTransport,
    readonly context: ClientContext,
    readonly log: MqttLogger,
    /** What handles its packets once CONNECT is through: `handlers/dispatch.ts`, given by the server. */
    private readonly dispatch: PacketDispatch,
  ) {
    this.held = new HeldInput(context.holdLimits);
    this.reader = new PacketReader(broker.config.maxPacketSize, this);
    this.connectTimer = broker.clock.after(broker.config.connectTimeoutMs, connectExpired, this);
  }

  get sendWindow(): number {
    return Math.min(this.clientReceiveMaximum, this.broker.config.maxInflight);
  }

  receive(data: Buffer): void {
    if (this.state === 'closed') return;
    this.broker.stats.bytesReceived += data.byteLength;
    this.reader.push(data);
  }

  onMalformed(error: MqttProtocolError): void {
    this.fail(error);
  }

  onPacket(packet: Packet): void {
    if (this.state === 'closed') return;
    this.broker.stats.messagesReceived++;
    this.keepAliveTimer?.refresh();
    if (this.state === 'authenticating') {
      const refusal = this.held.push(packet, packetSize(packet.length ?? 0));
      if (refusal !== null) this.close(CLOSE.policyViolation, refusal, false);
      return;
    }
    if (this.busy) return this.wait(packet);
    this.handle(packet);
  }

  /**
   * The packet being handled goes on over later turns of the loop: the client's next packets wait
   * until `resume`, so that none overtakes it (a PUBLISH behind a SUBSCRIBE meets its subscriptions).
   */
  hold(): void {
    this.busy = true;
  }

  /** The packet that called `hold` is done: the packets that waited are handled, in order. */
  resume(): void {
    this.busy = false;
    const waiting = this.behind?.take() ?? [];
    for (const packet of waiting) {
      if (this.state !== 'connected') return;
      if (this.busy) this.wait(packet);
      else this.handle(packet);
    }
  }

  /** Loop time spent on this client's packet after `receive` returned, for its input budget. */
  charge(ms: number): void {
    this.transport.charge?.(ms);
  }

  private wait(packet: Packet): void {
    this.behind ??= new HeldInput(BEHIND_BUSY_LIMITS, 'behind a packet still being handled');
    const refusal = this.behind.push(packet, packetSize(packet.length ?? 0));
    if (refusal !== null) this.disconnect(RC.quotaExceeded, refusal);
  }

  private handle(packet: Packet): void {
    try {
      this.dispatch(this, packet);
    } catch (err) {
      if (!(err instanceof MqttProtocolError)) throw err;
      this.fail(err);
    }
  }

  /** A protocol violation: v5 clients past CONNACK hear why in a DISCONNECT; the connection ends. */
  fail(error: MqttProtocolError): void {
    if (this.state === 'closed') return;
    this.log.info(
      { clientId: this.clientId, reasonCode: error.reasonCode, why: error.message },
      'mqtt protocol error',
    );
    if (this.state === 'connecting' && error.message.includes('Invalid protocol version')) {
      // The version is unknown, so answer in 3.1.1's encoding, which every version can read (3.1.4-2).
      this.transport.send(
        encodePacket(
          { cmd: 'connack', returnCode: V3_CONNACK.unacceptableProtocolVersion, sessionPresent: false },
          4,
        ),
      );
      return this.close(CLOSE.protocolError, error.message, false);
    }
    this.disconnect(error.reasonCode, error.message);
  }

  /** Server-initiated end: a v5 DISCONNECT once connected, then the transport closes. The will is published. */
  disconnect(reasonCode: number, reason: string): void {
    if (this.state === 'closed') return;
    if (this.state === 'connected' && this.version === 5) {
      this.write({ cmd: 'disconnect', reasonCode, properties: { reasonString: reason.slice(0, 256) } });
    }
    this.close(closeCodeFor(reasonCode), reason, true);
  }

  takeOver(): void {
    this.disconnect(RC.sessionTakenOver, 'session taken over by another connection');
  }

  useAnotherServer(): void {
    this.disconnect(RC.useAnotherServer, 'this node lost touch with the cluster');
  }

  discarded(): void {
    this.disconnect(RC.administrativeAction, 'session discarded by an administrator');
  }

  /**
   * Shutdown: v5 clients get DISCONNECT 0x8B. `endTransport` false leaves the close to the caller
   * (the WebSocket gateway closes with 1001 right after).
   */
  goodbye(endTransport: boolean): void {
    if (this.state === 'closed') return;
    if (this.state === 'connected' && this.version === 5) {
      this.write({
        cmd: 'disconnect',
        reasonCode: RC.serverShuttingDown,
        properties: { reasonString: 'server shutting down' },
      });
    }
    this.close(CLOSE.normal, 'server shutting down', true, endTransport);
  }

  /** The network connection ended without DISCONNECT: the will is due. */
  transportClosed(): void {
    this.close(CLOSE.normal, 'connection lost', true);
  }

  close(code: number, reason: string, publishWill: boolean, endTransport = true): void {
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected';
    this.state = 'closed';
    if (wasConnected && this.broker.traces.active) {
      this.broker.traces.client(clientRecord('disconnect', this.clientId, 'closed', reason));
    }
    if (this.connectTimer !== null) this.broker.clock.cancel(this.connectTimer);
    if (this.keepAliveTimer !== null) this.broker.clock.cancel(this.keepAliveTimer);
    if (wasConnected) this.detach(publishWill);
    if (endTransport) this.transport.close(code, reason);
  }

  /** CONNACK accepted: from here the keep-alive runs. */
  started(keepAliveSec: number): void {
    if (this.connectTimer !== null) this.broker.clock.cancel(this.connectTimer);
    this.connectTimer = null;
    if (keepAliveSec > 0) {
      // 1.5 times the keep-alive without a packet ends the connection (3.1.2.10).
      this.keepAliveTimer = this.broker.clock.after(keepAliveSec * 1500, keepAliveExpired, this);
    }
  }

  /** The packets that arrived while CONNECT was being authenticated, handled in order once accepted. */
  releaseHeld(): void {
    for (const packet of this.held.take()) {
      if (this.state !== 'connected') return;
      if (this.busy) this.wait(packet);
      else this.handle(packet);
    }
  }

  write(packet: Packet): void {
    if (this.state === 'closed') return;
    if (!this.problemInfo && !PROBLEM_INFO_FREE.has(packet.cmd) && 'properties' in packet) {
      delete packet.properties;
    }
    let bytes = encodePacket(packet, this.version);
    if (bytes.byteLength > this.clientMaxPacketSize && 'properties' in packet && packet.properties) {
      // A reason string and user properties are left out rather than exceed it (MQTT-3.1.2-24).
      const properties = { ...packet.properties } as Record<string, unknown>;
      delete properties['reasonString'];
      delete properties['userProperties'];
      packet.properties = properties;
      bytes = encodePacket(packet, this.version);
    }
    this.broker.stats.messagesSent++;
    this.broker.stats.bytesSent += bytes.byteLength;
    this.transport.send(bytes);
  }

  sendPublish(delivery: Delivery | InFlight, dup: boolean): boolean {
    if (this.state === 'closed') return false;
    const topic = delivery.message.topic;
    // A subscription that a topic rule cuts through (`+/victim/#` past a deny on `devices/#`): this
    // message's topic is asked. Refused, it is done with, as a message too large for the client is.
    if (this.permissions.checksReads && !this.permissions.mayRead(topic)) {
      this.log.debug({ clientId: this.clientId, topic }, 'publish not authorized for this client, not sent');
      return false;
    }
    if (delivery.qos === 0 && this.transport.buffered() > this.broker.config.slowSubscriberDropBytes) {
      this.broker.stats.publishDropped++;
      this.broker.hooks.dropped?.('slow subscriber', this.clientId, topic);
      return false;
    }
    const alias = this.version === 5 ? this.outboundAliases.lookup(topic) : undefined;
    let bytes: Buffer;
    try {
      // The time only matters to a message that expires: most do not, and reading the clock per delivery shows in a fan-out.
      const now = delivery.message.expiresAt === null ? 0 : this.broker.clock.now();
      bytes = encodePublish(delivery, dup, this.version, alias, now);
    } catch (err) {
      // A message this client cannot be sent must not fail the publisher or the other subscribers.
      this.log.warn(
        { clientId: this.clientId, topic, err: (err as Error).message },
        'publish not encodable, dropped',
      );
      return false;
    }
    if (bytes.byteLength > this.clientMaxPacketSize) {
      this.log.debug({ clientId: this.clientId, topic }, 'publish larger than the client accepts, dropped');
      return false;
    }
    if (alias?.isNew === true) this.outboundAliases.remember(topic, alias.alias);
    this.broker.stats.messagesSent++;
    this.broker.stats.bytesSent += bytes.byteLength;
    this.transport.send(bytes);
    // Only stream deliveries are timed: each costs a JetStream message already, a clock read is nothing.
    if (delivery.streamSequence !== undefined && this.session !== null)
      this.session.streamSentAtMs = Date.now();
    return true;
  }

  sendPubrel(packetId: number): void {
    // An explicit success code gets mqtt-packet's 2-byte form, which paho 1.6 needs (it cannot parse
    // a v5 PUBREL carrying a reason code).
    this.write({ cmd: 'pubrel', messageId: packetId, reasonCode: RC.success });
  }

  /** Gives up the session; its will and expiry are the session lifecycle's business. */
  private detach(publishWill: boolean): void {
    const session = this.session;
    if (session === null) return;
    const will = publishWill ? this.will : null;
    const principal = this.principal?.subject ?? null;
    const { broker, permissions } = this;
    broker.lifecycle.detach(
      session,
      this,
      will === null
        ? null
        : {
            delaySec: will.delaySec,
            record: this.willRecord,
            publish: () => {
              if (!permissions.mayPublish(will.message.topic)) return;
              const message =
                will.expirySec === null
                  ? will.message
                  : { ...will.message, expiresAt: broker.clock.now() + will.expirySec * 1000 };
              broker.publishWill(message, principal);
            },
          },
    );
  }
}

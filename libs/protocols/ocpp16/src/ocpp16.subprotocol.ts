import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { TOPIC_BUS, type BusMessage, type TopicBus } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import {
  BROKER_CONFIG,
  BROKER_LOGGER,
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type HandshakeCheckContext,
  type HandshakeCheckFailure,
  type SubprotocolHandler,
} from '#broker/gateway';
import { CLOSE } from '#broker/kit';
import { BrokerStore, NotFoundError } from '#broker/store';
import { type Logger } from 'pino';
import { CallEventMessage, connectionEventMessage, EventTopics } from './bus-events.js';
import { CentralSystem } from './central-system.js';
import { ChargePointDirectory } from './charge-point-directory.js';
import { type OcppConfig, ocppConfig } from './ocpp-config.js';
import { ChargePointSessions, type ChargePointConnection } from './charge-point-sessions.js';
import { CORE_HANDLERS, type HandlerContext } from './handlers/index.js';
import { OcppMetrics } from './ocpp-metrics.js';
import { settingsFor } from './ocpp-settings.js';
import { checkChargePoint, identityOf } from './ocpp16.check.js';
import { OcppSchemas } from './schemas.js';
import { OcppSession } from './ocpp-session.js';
import { OcppRepositories } from './store/ocpp.repositories.js';

export const OCPP16 = 'ocpp1.6';

/** Close code for a connection replaced by a newer one of the same charge point (private-use range). */
export const REPLACED_CLOSE_CODE = 4000;

/**
 * The gateway's view of the OCPP 1.6 central system: the handshake check, and per connection the
 * wiring of a sans-IO OcppSession to the transport, the store, the bus and the session registry.
 */
@Subprotocol({ name: OCPP16, onUnsupported: 'omit', messages: 'text', maxPayload: 256 * 1024 })
@Injectable()
export class Ocpp16Subprotocol implements SubprotocolHandler, OnApplicationBootstrap {
  /** The `ocpp` key of the config, read once. */
  private readonly configured: OcppConfig;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(OcppRepositories) private readonly ocpp: OcppRepositories,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    private readonly sessions: ChargePointSessions,
    private readonly directory: ChargePointDirectory,
    private readonly metrics: OcppMetrics,
    private readonly schemas: OcppSchemas,
  ) {
    this.configured = ocppConfig.of(config);
    directory.onReplaced((entry, node) => {
      entry.connection.close(
        REPLACED_CLOSE_CODE,
        `replaced by a newer connection of this charge point (${node})`,
      );
    });
  }

  onApplicationBootstrap(): void {
    this.ocpp.stations.onWriteError = (err) =>
      this.logger.error({ err: err.message }, 'ocpp: writing last-seen times failed; retried in a second');
    this.configured.endpoints.forEach(({ path }, index) => {
      const hosted = this.config.endpoints.some((e) => e.path === path && e.subprotocols.includes(OCPP16));
      if (!hosted) throw new Error(`ocpp.endpoints.${index}.path: no endpoint ${path} hosts ${OCPP16}`);
    });
    for (const endpoint of this.config.endpoints.filter((e) => e.subprotocols.includes(OCPP16))) {
      const settings = settingsFor(this.configured, endpoint.path);
      const log = { endpoint: endpoint.path, ...settings };
      if (settings.allowUnknownChargePoints) {
        this.logger.warn(
          log,
          'ocpp1.6: charge points not in the store may connect (ocpp.allowUnknownChargePoints)',
        );
      } else {
        this.logger.info(log, 'ocpp1.6: only charge points in the store may connect');
      }
    }
  }

  checkHandshake(context: HandshakeCheckContext): Promise<HandshakeCheckFailure | null> {
    return checkChargePoint(context, settingsFor(this.configured, context.endpoint), this.ocpp.chargePoints);
  }

  open(connection: Connection, context: ConnectionContext): void {
    if (context.protocol === null) {
      // OCPP-J 1.6 section 3: complete the handshake without the header, then close at once.
      connection.close(
        CLOSE.protocolError,
        'this endpoint speaks OCPP 1.6 only: offer the subprotocol ocpp1.6',
      );
      return;
    }
    const identity = identityOf(context.params);
    if (identity === null) {
      // checkHandshake already refused this with 400; the guard keeps the type honest.
      connection.close(CLOSE.policyViolation, 'not a valid charge point identity');
      return;
    }
    // The charge point's identity (Basic-auth checked at the handshake where a key is stored) is who this is.
    context.identify({ subject: identity, claims: {}, carrier: 'header' });
    const log = this.logger.child({ connection: connection.id, chargePoint: identity });
    const settings = settingsFor(this.configured, context.endpoint);
    const handlerContext: HandlerContext = {
      identity,
      store: this.ocpp,
      settings,
      accepted: false,
      isKnown: () => this.isKnown(identity),
      now: () => new Date(),
      charge: (ms) => connection.charge(ms),
    };
    const topics = new EventTopics(identity);
    const central = new CentralSystem(handlerContext, CORE_HANDLERS, (event) => {
      this.metrics.callHandled(event.action);
      this.publish(new CallEventMessage(event, topics.of(event.action)));
    });
    const session = new OcppSession({
      schemas: this.schemas,
      dispatcher: central,
      peer: connection,
      callTimeoutMs: settings.callTimeoutMs,
      maxQueuedCalls: settings.maxQueuedCalls,
      // A reconnect without a new boot keeps the acceptance of the last BootNotification.
      ready: this.ocpp.stations.get(identity).then((station) => {
        if (station?.bootStatus === 'Accepted') handlerContext.accepted = true;
      }),
      observer: {
        badMessage: (reason, detail) => {
          this.metrics.badMessage(reason);
          // Debug only: a peer must not be able to flood the log; the counter shows the rate.
          log.debug({ reason, detail }, 'ocpp: bad message');
        },
        internalError: (action, err) => {
          this.metrics.calls.inc({ direction: 'in', action, outcome: 'internal-error' });
          log.error({ action, err: err.message }, 'ocpp: handler failed');
        },
      },
    });
    const entry: ChargePointConnection = {
      identity,
      endpoint: context.endpoint,
      connection,
      session,
      connectedAt: new Date(),
    };
    const replaced = this.sessions.register(entry);
    if (replaced !== null) {
      log.info({ replaced: replaced.connection.id }, 'ocpp: a new connection replaces the open one');
      replaced.connection.close(REPLACED_CLOSE_CODE, 'replaced by a newer connection of this charge point');
    } else {
      this.metrics.chargePoints.inc();
    }
    this.directory.held(entry);
    this.publish(
      connectionEventMessage(
        identity,
        'Connected',
        { connection: connection.id, address: context.remoteAddress },
        entry.connectedAt,
      ),
    );
    connection.onMessage((data) => session.receive(data.toString('utf8')));
    connection.onClose((code, reason) => {
      session.closed();
      this.directory.released(entry);
      // A replaced connection closes after its successor registered: dashboards must not read it as offline.
      const replaced = !this.sessions.remove(entry);
      if (!replaced) this.metrics.chargePoints.dec();
      this.publish(
        connectionEventMessage(
          identity,
          'Disconnected',
          { connection: connection.id, code, reason, replaced },
          new Date(),
        ),
      );
    });
  }

  private async isKnown(identity: string): Promise<boolean> {
    try {
      await this.ocpp.chargePoints.get(identity);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** A bus handler's failure is the subscriber's problem, never the charge point's. */
  private publish(message: BusMessage): void {
    try {
      this.bus.publish(message);
    } catch (err) {
      this.logger.error({ topic: message.topic, err: (err as Error).message }, 'ocpp: bus publish failed');
    }
  }
}

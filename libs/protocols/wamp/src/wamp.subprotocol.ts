import { Inject, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { TopicAuthorizer } from '#broker/auth';
import { type BusMessage, type BusReach, type BusSubscription, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { ClusterNode } from '#broker/cluster';
import { type BrokerConfig } from '#broker/config';
import {
  BROKER_CONFIG,
  BROKER_LOGGER,
  GatewayMetrics,
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
} from '#broker/gateway';
import { CLOSE, systemClock } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type Logger } from 'pino';
import { type Credentials } from './authenticate.js';
import { type BusAccess } from './bus-access.js';
import { isReserved, type MatchPolicy } from './uri.js';
import { type Args, type Kwargs } from './messages.js';
import { autoRealmSettings, realmSettings } from './realm-settings.js';
import { wampConfig } from './wamp-config.js';
import { Router } from './router.js';
import { type Session } from './wamp-session.js';
import { SessionProtocol } from './session-protocol.js';
import { busFilterOf, busPayloadOf, busTopicOf, wampArgsOf, wampTopicOf } from './topic-mapping.js';
import { WampCluster } from './wamp-cluster.js';
import { CraCredentials } from './store/cra-credentials.js';

/** The reach of a bus message no WAMP session got: one object, not one per message. */
const NOBODY: BusReach = Object.freeze({ reached: 0 });

export const WAMP_SUBPROTOCOL = 'wamp.2.json';

/**
 * The WAMP v2 router on the gateway: each connection gets a sans-IO `SessionProtocol`; the bus realm's
 * topics are bridged to the bus both ways (see topic-mapping.ts).
 */
@Subprotocol({
  name: WAMP_SUBPROTOCOL,
  onUnsupported: 'reject',
  // Binary frames reach the module so they get a WAMP ABORT, not only a WebSocket close.
  messages: 'any',
  maxPayload: 1024 * 1024,
  ownFirstMessageAuth: true,
})
export class WampSubprotocol implements SubprotocolHandler, OnModuleInit, OnModuleDestroy {
  private readonly router: Router;
  private readonly sessions = new Map<Connection, SessionProtocol>();
  private readonly busRealm: string | null;
  private busSubscription: BusSubscription | null = null;
  /** Per subscription of the bus realm (match and URI), the bus filter it attracts from other nodes. */
  private readonly attracted = new Map<string, BusSubscription>();
  private readonly log: Logger;
  private readonly cluster: WampCluster | null;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    @Inject(BROKER_LOGGER) logger: Logger,
    @Inject(TopicAuthorizer) private readonly authorizer: TopicAuthorizer,
    @Optional() @Inject(CraCredentials) private readonly craKeys?: CraCredentials,
    @Optional() @Inject(ClusterNode) cluster: ClusterNode | null = null,
    @Optional() @Inject(GatewayMetrics) metrics: GatewayMetrics | null = null,
  ) {
    this.log = logger.child({ module: WAMP_SUBPROTOCOL });
    const wamp = wampConfig.of(config);
    this.busRealm = wamp.busRealm;
    const remote = cluster === null ? undefined : new WampCluster(cluster, this.log);
    this.cluster = remote ?? null;
    this.router = new Router({
      ...(remote && { remote: (realm: string) => remote.remote(realm) }),
      realms: wamp.realms.map(realmSettings),
      autoRealm: autoRealmSettings(wamp),
      limits: wamp.limits,
      clock: systemClock,
      published: (realm, topic, args, kwargs, publisher) => this.toBus(realm, topic, args, kwargs, publisher),
      subscriptionChanged: (realm, match, uri, present) => this.attract(realm, match, uri, present),
      busAccess: (realm, principal) => (realm === this.busRealm ? this.busAccess(principal) : null),
    });
    metrics?.modules.report(WAMP_SUBPROTOCOL, {
      title: 'WAMP',
      labels: {
        sessions: 'Sessions',
        realms: 'Realms',
        registrations: 'Registrations',
        subscriptions: 'Subscriptions',
      },
      read: () => this.router.figures(),
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.busRealm !== null)
      this.busSubscription = this.bus.subscribe('#', (message) => this.fromBus(message), { reach: 'node' });
    await this.cluster?.start(this.router, () => this.letCalleesGo());
  }

  /**
   * This node is about to lose its registrations to the cluster: each callee is told GOODBYE
   * (`wamp.close.system_shutdown`) and its connection closes 1001, so that it reconnects and registers
   * where the cluster can reach it; so is a session waiting for a registration. Callers and subscribers
   * stay.
   */
  private letCalleesGo(): void {
    let callees = 0;
    for (const [connection, protocol] of this.sessions) {
      if (!protocol.registers) continue;
      protocol.shutdown();
      connection.close(CLOSE.goingAway, 'cut off from the cluster: register elsewhere');
      callees++;
    }
    if (callees > 0) this.log.warn({ callees }, 'WAMP: cut off from the cluster, callees let go here');
  }

  onModuleDestroy(): void {
    this.busSubscription?.unsubscribe();
    for (const attraction of this.attracted.values()) attraction.unsubscribe();
    this.attracted.clear();
    this.cluster?.stop();
  }

  open(connection: Connection, context: ConnectionContext): void {
    const { craKeys } = this;
    const credentials: Credentials = {
      principal: context.principal,
      // The gateway lets an unauthenticated client through to HELLO; a required endpoint stays required.
      anonymousAllowed: context.authMode !== 'required',
      authenticate: (credential) => context.authenticate(credential),
      identify: (principal) => context.identify(principal),
      ...(craKeys && { craKey: (authid) => craKeys.craKey(authid) }),
    };
    // Created on first use, as the gateway does: most sessions never log.
    let child: Logger | null = null;
    const log = (): Logger => (child ??= this.log.child({ connection: connection.id }));
    // The connection is the session's port as it is: EVENTs leave through its sendEvent, which a
    // subscriber that stopped reading does without.
    const protocol = new SessionProtocol(this.router, connection, credentials, {
      joined: (s) =>
        this.log.isLevelEnabled('debug') &&
        log().debug(
          { session: s.id, realm: s.realm, authid: s.identity.authid, authrole: s.identity.authrole },
          'WAMP session joined',
        ),
      left: (s) =>
        this.log.isLevelEnabled('debug') &&
        log().debug({ session: s.id, realm: s.realm }, 'WAMP session left'),
      aborted: (reason, message) => log().info({ reason, message }, 'WAMP session aborted'),
      failed: (err) =>
        log().error({ err: err instanceof Error ? err.message : String(err) }, 'WAMP session failed'),
    });
    this.sessions.set(connection, protocol);
    connection.onMessage((data, isBinary) =>
      isBinary ? protocol.receiveBinary() : protocol.receive(data.toString('utf8')),
    );
    connection.onClose(() => {
      this.sessions.delete(connection);
      protocol.closed();
    });
  }

  goodbye(connection: Connection): void {
    this.sessions.get(connection)?.shutdown();
  }

  /** The broker's topic authorization in the bus realm's URIs; URIs the bus cannot carry stay WAMP's own. */
  private busAccess(principal: Principal | null): BusAccess {
    const grant = this.authorizer.grantFor({ principal, clientId: null });
    return {
      mayPublish: (uri) => {
        const topic = busTopicOf(uri);
        return topic === null || grant.mayPublish(topic);
      },
      maySubscribe: (match, uri) => {
        // The router's own meta events (wamp.*) never come from the bus.
        const filter = isReserved(uri) ? null : busFilterOf(match, uri);
        return filter === null || grant.maySubscribe(filter);
      },
      mayRead: (uri) => {
        const topic = busTopicOf(uri);
        return topic === null || grant.mayRead(topic);
      },
      checksReads: grant.checksReads,
    };
  }

  /** The bus brings other nodes' messages only for topics the bus realm's subscribers want. */
  private attract(realm: string, match: MatchPolicy, uri: string, present: boolean): void {
    if (realm !== this.busRealm) return;
    const key = `${match} ${uri}`;
    if (!present) {
      this.attracted.get(key)?.unsubscribe();
      this.attracted.delete(key);
      return;
    }
    const filter = busFilterOf(match, uri);
    if (filter === null) return;
    try {
      this.attracted.set(key, this.bus.attract(filter));
    } catch (err) {
      this.log.debug({ err: (err as Error).message, uri }, 'WAMP subscription not attracted from the bus');
    }
  }

  private toBus(realm: string, topic: string, args: Args, kwargs: Kwargs, publisher: Session): void {
    if (realm !== this.busRealm) return;
    const busTopic = busTopicOf(topic);
    if (busTopic === null) return;
    const { payload, contentType } = busPayloadOf(args, kwargs);
    try {
      this.bus.publish({
        topic: busTopic,
        payload,
        contentType,
        origin: WAMP_SUBPROTOCOL,
        principal: publisher.identity.authmethod === 'anonymous' ? null : publisher.identity.authid,
      });
    } catch (err) {
      // A topic the bus refuses (a lone surrogate, say) stays inside WAMP.
      this.log.debug({ err: (err as Error).message }, 'WAMP publication not bridged to the bus');
    }
  }

  private fromBus(message: BusMessage): BusReach {
    // Our own publications come back through '#': WAMP subscribers already had them. The same origin
    // from another node is WAMP traffic of that node's clients, which reaches ours through here.
    if ((message.origin === WAMP_SUBPROTOCOL && message.node === undefined) || this.busRealm === null)
      return NOBODY;
    const realm = this.router.existingRealm(this.busRealm);
    if (realm === undefined || !realm.broker.hasSubscriptions) return NOBODY;
    const uri = wampTopicOf(message.topic, realm.settings.uriRule);
    if (uri === null) return NOBODY;
    return realm.broker.dispatch(uri, wampArgsOf(message.payload, message.contentType), undefined, {
      publisher: null,
      excludeMe: false,
      disclose: false,
    });
  }
}

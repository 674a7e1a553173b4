/** The package's root export: what an application imports to host the broker and write modules. */
export { BrokerModule } from './broker.module.js';
export { BROKER_OPTIONS } from './broker.module-definition.js';
export type { BrokerModuleExtras } from './broker-parts.js';
export {
  BROKER_CONFIG,
  BROKER_LOGGER,
  BrokerWsAdapter,
  brokerHttpsOptions,
  ConnectionRegistry,
  createLogger,
  flushAndExit,
  GatewayClient,
  GatewayServer,
  HandshakeGuard,
  HandshakeRefusal,
  HealthChecks,
  ManualClock,
  startBroker,
  Subprotocol,
  SubprotocolRegistry,
  systemClock,
} from '#broker/gateway';
export type {
  Clock,
  Connection,
  ConnectionContext,
  EventPeerPort,
  GatewayMessage,
  GatewayMessageParser,
  HandshakeCheckContext,
  HandshakeCheckFailure,
  HandshakeGuardContext,
  HandshakeGuardHandler,
  HandshakeGuardOptions,
  ParseResult,
  PeerPort,
  RunningBroker,
  SubprotocolGatewayOptions,
  SubprotocolHandler,
  SubprotocolOptions,
  TimerHandle,
} from '#broker/gateway';
export { TopicAuthorizer, TopicGrant } from '#broker/auth';
export type { TopicClient } from '#broker/auth';
export { TOPIC_BUS } from '#broker/bus';
export type { BusMessage, BusSubscription, TopicBus } from '#broker/bus';
export { ConfigError, loadConfig, parseConfig, printableConfig } from '#broker/config';
export type { BrokerConfig, BrokerConfigInput } from '#broker/config';
export type { Principal } from '#broker/handshake';
export { mountAdminOpenApi } from '#broker/admin';

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
  DashboardLookups,
  DashboardPanels,
  DashboardTraces,
  flushAndExit,
  GatewayClient,
  GatewayMetrics,
  GatewayServer,
  HandshakeGuard,
  HandshakeRefusal,
  HealthChecks,
  LOOKUP_KEY_MAX_LENGTH,
  startBroker,
  Subprotocol,
  SubprotocolRegistry,
} from '#broker/gateway';
export type {
  Connection,
  ConnectionContext,
  DashboardLookup,
  DashboardPanel,
  DashboardTrace,
  Figures,
  FiguresSource,
  GatewayMessage,
  GatewayMessageParser,
  HandshakeCheckContext,
  HandshakeCheckFailure,
  HandshakeGuardContext,
  HandshakeGuardHandler,
  HandshakeGuardOptions,
  LookupAction,
  LookupField,
  LookupInfo,
  LookupResult,
  LookupTable,
  LookupView,
  PanelCell,
  PanelChip,
  PanelColumn,
  PanelRow,
  PanelRows,
  RunningBroker,
  SubprotocolGatewayOptions,
  SubprotocolHandler,
  SubprotocolOptions,
  TraceEvent,
  TraceKindInfo,
  TraceRecord,
  TraceSink,
} from '#broker/gateway';
// The protocol kit, also on its own as `ws-protocol-broker/kit` (no Nest, no ws).
export { CLOSE, ManualClock, systemClock } from '#broker/kit';
export type { Clock, EventPeerPort, ParseResult, PeerPort, TimerHandle } from '#broker/kit';
export { TopicAuthorizer, TopicGrant } from '#broker/auth';
export type { TopicClient } from '#broker/auth';
export { TOPIC_BUS } from '#broker/bus';
export type { BusMessage, BusSubscription, TopicBus } from '#broker/bus';
export {
  BrokerSection,
  ConfigError,
  ConfigSection,
  loadConfig,
  parseConfig,
  printableConfig,
} from '#broker/config';
export type {
  BrokerConfig,
  BrokerConfigInput,
  BrokerConfigWithSections,
  StandardSchema,
} from '#broker/config';
export type { Principal } from '#broker/handshake';
export { Actor, AdminApi, mountAdminOpenApi } from '#broker/admin';
export { BrokerStore } from '#broker/store';

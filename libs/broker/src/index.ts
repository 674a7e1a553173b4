export { BrokerModule } from './broker.module.js';
export { BROKER_OPTIONS } from './broker.module-definition.js';
export type { BrokerModuleExtras } from './broker-parts.js';

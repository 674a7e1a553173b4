export { BrokerHealthIndicator } from './broker.health.js';

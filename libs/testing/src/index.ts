export { InMemoryTopicBus } from '#broker/bus';
export * from './start-test-broker.js';
export * from './test-connection.js';

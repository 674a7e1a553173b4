export * from './gateway.module.js';
export * from './start-broker.js';
export * from './subprotocol.decorator.js';
export * from './subprotocol.types.js';
export * from './logger.js';
export * from './tokens.js';
export * from './connection-registry.js';
export * from './token-verifier.js';

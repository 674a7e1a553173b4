export * from './authorization.schema.js';
export * from './config.schema.js';
export * from './jwt.schema.js';
export * from './load-config.js';
export * from './wamp.schema.js';

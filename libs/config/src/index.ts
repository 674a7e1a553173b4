export * from './authorization.schema.js';
export * from './config.schema.js';
export * from './config-section.js';
export * from './jwt.schema.js';
export * from './layer-config.js';
export * from './load-config.js';
export * from './print-config.js';
export * from './wamp.schema.js';

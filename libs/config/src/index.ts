export * from './authorization.schema.js';
export * from './config.schema.js';
export * from './config-section.js';
export * from './jwt.schema.js';
export * from './layer-config.js';
export * from './load-config.js';
export * from './print-config.js';
// The units a built-in module's own schema is written in, as the broker's are.
export { inputBudget, timerMs, timerMsOrOff } from './schema-units.js';

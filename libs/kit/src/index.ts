export * from './clock.js';
export * from './manual-clock.js';
export * from './close-codes.js';
export * from './parse-result.js';
export * from './peer-port.js';
export * from './held-input.js';
export * from './input-budget.js';
export * from './json-depth.js';

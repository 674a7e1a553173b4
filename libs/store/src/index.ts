export * from './broker-store.js';
export * from './charge-points.repository.js';
export * from './credentials.repository.js';
export * from './errors.js';
export * from './store.module.js';
export * from './store.types.js';

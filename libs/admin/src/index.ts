export * from './admin.module.js';
export * from './openapi.js';

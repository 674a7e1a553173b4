export * from './dashboard.module.js';

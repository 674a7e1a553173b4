export * from './jwt-verifier.js';

export * from './jwt-verifier.js';
export * from './password-check.js';
export * from './scopes.js';

export * from './jwt-verifier.js';
export * from './origin-entries.js';
export * from './password-check.js';
export * from './remote-key-set.js';
export * from './scopes.js';
export * from './stored-tokens.js';
export * from './token-introspection.js';
export * from './topic-authorizer.js';

export * from './decide.js';
export * from './types.js';
export * from './match-origin.js';
export * from './negotiate-deflate.js';
export * from './header-tokens.js';

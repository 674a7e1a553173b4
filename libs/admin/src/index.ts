export * from './admin-api.decorator.js';
export * from './admin.module.js';
export { MISSING_NODES_HEADER } from './connections.controller.js';
export * from './openapi.js';
export * from './problem.filter.js';
export * from './dto/page-limit.dto.js';
export { CreateTokenDto, storedExpiry } from './dto/credential.dto.js';

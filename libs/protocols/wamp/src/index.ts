export { WampModule } from './wamp.module.js';
export { WAMP_SUBPROTOCOL, WampSubprotocol } from './wamp.subprotocol.js';
export { Router, type RouterOptions } from './router.js';
export { SessionProtocol, ROUTER_ROLES } from './session-protocol.js';
export { busTopicOf, wampTopicOf } from './topic-mapping.js';

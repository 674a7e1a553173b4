export { WampModule } from './wamp.module.js';
export { wampConfig, type WampConfig, type WampRealmConfig } from './wamp-config.js';
export { WAMP_SUBPROTOCOL, WampSubprotocol } from './wamp.subprotocol.js';
export { Router, type RouterOptions } from './router.js';
export { SessionProtocol, ROUTER_ROLES } from './session-protocol.js';
export { busTopicOf, wampTopicOf } from './topic-mapping.js';

export { TOPIC_BUS } from './bus.js';
export type { BusHandler, BusMessage, BusReach, BusSubscription, SubscribeOptions, TopicBus } from './bus.js';
export { InMemoryTopicBus } from './in-memory-topic-bus.js';
export type { InMemoryTopicBusOptions } from './in-memory-topic-bus.js';
export {
  assertTopicFilter,
  assertTopicName,
  filtersOverlap,
  filterWithin,
  InvalidTopicError,
  MAX_TOPIC_BYTES,
  topicMatches,
} from './topic.js';

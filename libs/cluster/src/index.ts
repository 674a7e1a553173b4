export { type BucketWatch, watchBucket } from './bucket-watch.js';
export { ClusterModule } from './cluster.module.js';
export {
  ClusterNode,
  defaultNodeId,
  NodeTimeoutError,
  NoHolderError,
  RemoteError,
  type RequestHandler,
  type ScatterResult,
} from './cluster-node.js';
export type { MembershipChange } from './membership.js';
export { NatsTopicBus } from './nats-topic-bus.js';
export { filterToSubjects, subjectToTopic, topicToSubject } from './subjects.js';

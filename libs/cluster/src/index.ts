export { type BucketWatch, watchBucket } from './bucket-watch.js';
export { ClusterModule } from './cluster.module.js';
export { NodeTimeoutError, NoHolderError, RemoteError } from './cluster-errors.js';
export { ClusterNode, type ScatterResult } from './cluster-node.js';
export type { RequestHandler } from './cluster-requests.js';
export type { Membership, MembershipChange } from './membership.js';
export { NatsTopicBus } from './nats-topic-bus.js';
export { defaultNodeId } from './node-id.js';
export { filterToSubjects, subjectToTopic, topicToSubject } from './subjects.js';

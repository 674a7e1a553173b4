import { Inject, type OnModuleInit } from '@nestjs/common';
import { BrokerStore, OriginCache } from '#broker/store';
import { ClusterNode } from './cluster-node.js';

const ORIGINS = 'origins';

/**
 * Origin allowlists are the store state each node caches in memory; a change made through one node's
 * admin API is announced on NATS and the others reload at once (their poll stays as the backstop for a
 * notice lost while NATS was away). Credentials and charge points are read from PostgreSQL at each use,
 * so every node sees their changes without a notice.
 */
export class StoreNotices implements OnModuleInit {
  constructor(
    @Inject(ClusterNode) private readonly node: ClusterNode,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(OriginCache) private readonly origins: OriginCache,
  ) {}

  onModuleInit(): void {
    this.store.origins.onChange(() => this.node.notify(ORIGINS));
    this.node.onNotice(ORIGINS, () => void this.origins.refresh());
  }
}

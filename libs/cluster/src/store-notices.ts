import { Inject, type OnModuleInit, Optional } from '@nestjs/common';
import { BrokerStore, OriginCache } from '#broker/store';
import { ClusterNode } from './cluster-node.js';

const ORIGINS = 'origins';

/**
 * Origin allowlists are the store state each node caches in memory; a change made through one node's
 * admin API is announced on NATS and the others reload at once (their poll stays as the backstop for a
 * notice lost while NATS was away). Credentials and charge points are read from PostgreSQL at each use,
 * so every node sees their changes without a notice. One process (no ClusterNode) needs none of this.
 */
export class StoreNotices implements OnModuleInit {
  constructor(
    @Optional() @Inject(ClusterNode) private readonly node: ClusterNode | null,
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(OriginCache) private readonly origins: OriginCache,
  ) {}

  onModuleInit(): void {
    const node = this.node;
    if (node === null) return;
    this.store.origins.onChange(() => node.notify(ORIGINS));
    node.onNotice(ORIGINS, () => void this.origins.refresh());
  }
}

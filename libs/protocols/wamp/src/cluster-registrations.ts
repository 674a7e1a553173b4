import { createHash } from 'node:crypto';
import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { UriIndex } from './uri-index.js';
import { type MatchPolicy } from './uri.js';

/** A registration as the cluster records it: which node takes its calls, and how its callees share it. */
interface RegistrationRecord {
  readonly node: string;
  /** The process of that node that wrote it: a record of an earlier process under the id is stale. */
  readonly incarnation: string;
  readonly invoke: string;
  readonly realm: string;
  readonly match: MatchPolicy;
  readonly uri: string;
}

export interface Known extends RegistrationRecord {
  readonly key: string;
  readonly revision: number;
}

/** KV keys hold [-/_=.a-zA-Z0-9] and must stay short: a hash of the realm, the match policy and the URI. */
function keyOf(realm: string, match: MatchPolicy, uri: string): string {
  return createHash('sha256').update(`${realm}\u0000${match}\u0000${uri}`).digest('base64url');
}

function isRecord(value: unknown): value is RegistrationRecord {
  const r = value as RegistrationRecord;
  return (
    typeof r?.node === 'string' &&
    typeof r.incarnation === 'string' &&
    typeof r.invoke === 'string' &&
    typeof r.realm === 'string' &&
    typeof r.uri === 'string' &&
    (r.match === 'exact' || r.match === 'prefix' || r.match === 'wildcard')
  );
}

/**
 * The cluster's record of WAMP registrations: a KV bucket (exclusive registrations by create-if-absent,
 * so of two nodes racing for one URI one wins) that every node caches through a watch, by realm.
 */
export class ClusterRegistrations {
  private kv: KV | null = null;
  private readonly records = new Map<string, Known>();
  private readonly indexes = new Map<string, UriIndex<Known>>();
  private watch: BucketWatch | null = null;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
    /** A record went (its node left, or unregistered): callees here that share it may take it. */
    private readonly reclaim: (gone: Known) => void,
  ) {}

  async start(): Promise<void> {
    const kv = await this.node.bucket('wamp-registrations', { history: 1 });
    this.kv = kv;
    this.watch = await watchBucket(kv, (entry) => this.changed(entry), {
      log: this.log,
      what: 'wamp registrations',
      retryMs: 1000,
      loadTimeoutMs: 5000,
    });
    await this.watch.loaded;
    this.sweep();
  }

  /** After a reconnect: the watch starts over, to catch what changed meanwhile. */
  restartWatch(): void {
    this.watch?.restart();
  }

  stop(): void {
    this.watch?.stop();
  }

  /** The records of `realm` whose registrations match `uri`, best first. */
  *matching(realm: string, uri: string): Generator<Known> {
    const index = this.indexes.get(realm);
    if (index !== undefined) yield* index.matching(uri);
  }

  /** Deletes the records of a node that is gone. */
  deleteNode(node: string): void {
    for (const known of [...this.records.values()]) {
      if (known.node === node) this.deleteRecord(known);
    }
  }

  /**
   * At start: records of an earlier process under this node id, or of a node not live, or of a live
   * node's earlier incarnation, hold URIs nobody serves; they go.
   */
  private sweep(): void {
    const { membership } = this.node;
    for (const known of [...this.records.values()]) {
      const live =
        known.node !== this.node.nodeId &&
        membership.isLive(known.node) &&
        membership.incarnationOf(known.node) === known.incarnation;
      if (!live) this.deleteRecord(known);
    }
  }

  private deleteRecord(known: Known): void {
    this.kv?.delete(known.key, { previousSeq: known.revision }).catch(() => undefined);
  }

  async claim(realm: string, match: MatchPolicy, uri: string, invoke: string): Promise<boolean> {
    const kv = this.kv;
    if (kv === null) return true;
    const key = keyOf(realm, match, uri);
    const mine: RegistrationRecord = {
      node: this.node.nodeId,
      incarnation: this.node.incarnation,
      invoke,
      realm,
      match,
      uri,
    };
    const record = JSON.stringify(mine);
    try {
      this.remember(key, mine, await kv.create(key, record));
      return true;
    } catch {
      // Held already: by us, by a dead node (taken over), shared alike, or exclusively by another node.
    }
    let entry;
    try {
      entry = await kv.get(key);
    } catch {
      return false;
    }
    if (entry === null || entry.operation !== 'PUT') return this.claimAgain(kv, key, mine);
    let held: unknown;
    try {
      held = entry.json<unknown>();
    } catch {
      held = null;
    }
    if (!isRecord(held)) return this.replace(kv, key, mine, entry.revision);
    if (held.node === this.node.nodeId && held.incarnation === this.node.incarnation) return true;
    const { membership } = this.node;
    // An earlier process of ours, or a node the bucket confirms gone: its record holds a URI nobody serves.
    const stale =
      held.node === this.node.nodeId ||
      ((!membership.isLive(held.node) || membership.incarnationOf(held.node) !== held.incarnation) &&
        (await membership.confirmDead(held.node, held.incarnation)));
    if (stale) return this.replace(kv, key, mine, entry.revision);
    return invoke !== 'single' && held.invoke === invoke;
  }

  /** A record nobody serves (a dead node's, an earlier process's, not ours at all): overwritten by CAS. */
  private async replace(kv: KV, key: string, mine: RegistrationRecord, revision: number): Promise<boolean> {
    try {
      this.remember(key, mine, await kv.update(key, JSON.stringify(mine), revision));
      return true;
    } catch {
      return false;
    }
  }

  /** The record went away between the create and the read: one more create decides. */
  private async claimAgain(kv: KV, key: string, mine: RegistrationRecord): Promise<boolean> {
    try {
      this.remember(key, mine, await kv.create(key, JSON.stringify(mine)));
      return true;
    } catch {
      this.log.debug(
        { realm: mine.realm, match: mine.match, uri: mine.uri },
        'wamp: registration contested across nodes',
      );
      return false;
    }
  }

  /**
   * Deletes this node's record of a URI no callee here holds any longer. Resolves false when the bucket
   * did not take the delete (NATS away, the request lost on the way): the record stays, and the URI with
   * it, until `releaseUnserved` deletes it.
   */
  release(realm: string, match: MatchPolicy, uri: string): Promise<boolean> {
    const known = this.records.get(keyOf(realm, match, uri));
    if (known === undefined || !this.isOwn(known) || this.kv === null) return Promise.resolve(true);
    return this.deleteOwn(this.kv, known);
  }

  /**
   * Deletes this node's records whose URIs no callee here serves (`served` says), as a release that was
   * lost would have. Resolves false if a delete did not go through.
   */
  async releaseUnserved(served: (known: Known) => boolean): Promise<boolean> {
    const kv = this.kv;
    if (kv === null) return true;
    const unserved = [...this.records.values()].filter((known) => this.isOwn(known) && !served(known));
    const done = await Promise.all(unserved.map((known) => this.deleteOwn(kv, known)));
    return done.every(Boolean);
  }

  private isOwn(known: Known): boolean {
    return known.node === this.node.nodeId && known.incarnation === this.node.incarnation;
  }

  private deleteOwn(kv: KV, known: Known): Promise<boolean> {
    return kv.delete(known.key, { previousSeq: known.revision }).then(
      () => true,
      // Not ours any longer (taken over meanwhile) is done too: only a bucket that did not answer is not.
      async () => (await kv.get(known.key).catch(() => undefined))?.revision !== known.revision,
    );
  }

  private remember(key: string, record: RegistrationRecord, revision: number): void {
    const known: Known = { ...record, key, revision };
    this.records.set(key, known);
    let index = this.indexes.get(record.realm);
    if (index === undefined) this.indexes.set(record.realm, (index = new UriIndex()));
    index.set(record.match, record.uri, known);
  }

  private forget(key: string): Known | undefined {
    const known = this.records.get(key);
    if (known === undefined) return undefined;
    this.records.delete(key);
    const index = this.indexes.get(known.realm);
    // Only if the index still holds this record (a newer one for the same URI replaced it otherwise).
    if (index?.get(known.match, known.uri) === known) index.delete(known.match, known.uri);
    return known;
  }

  private changed(entry: KvWatchEntry): void {
    if (entry.operation === 'PUT') {
      let record: unknown;
      try {
        record = entry.json<unknown>();
      } catch {
        record = null;
      }
      if (!isRecord(record)) {
        this.log.warn({ key: entry.key }, 'wamp: registration record that is not one ignored');
        return;
      }
      // A watch restarted replays entries this node may have moved past already.
      const known = this.records.get(entry.key);
      if (known !== undefined && known.revision > entry.revision) return;
      this.remember(entry.key, record, entry.revision);
      return;
    }
    const gone = this.forget(entry.key);
    if (gone !== undefined) this.reclaim(gone);
  }
}

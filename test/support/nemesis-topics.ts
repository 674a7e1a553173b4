import { type BrokerNode } from './cluster.js';
import { readRetained } from './mqtt-helpers.js';
import { type Device, type Publisher } from './nemesis.js';

/** How long a probe waits for a retained message to arrive after its SUBACK. */
const RETAINED_WAIT_MS = 3000;

/** One read of the retained topic: what a new subscriber on `node` was given, against what it had to be. */
export interface RetainedRead {
  readonly node: string;
  readonly at: number;
  /** The retained number it got; null when none came. */
  readonly value: number | null;
  /** The newest number acknowledged before the fault this read follows: nothing older may come. */
  readonly atLeast: number;
}

/**
 * The retained workload: a publisher on the anchor keeps one retained topic moving (1, 2, 3, ... QoS 1,
 * retain), and after each fault has settled a new subscriber on every live node reads the topic's
 * retained message. A read older than what was acknowledged before the fault began (or none at all) is
 * a retained message the cluster lost or served stale.
 */
export class RetainedWorkload {
  readonly reads: RetainedRead[] = [];
  /** Nodes that did not take a probe's connection (just restarting, say): not a verdict on the topic. */
  unreachable = 0;

  constructor(
    readonly publisher: Publisher,
    readonly topic: string,
  ) {}

  /** The newest number acknowledged at or before `at`. */
  ackedBy(at: number): number {
    let newest = 0;
    this.publisher.ackedAt.forEach((when, i) => {
      if (when <= at) newest = Math.max(newest, this.publisher.acked[i] as number);
    });
    return newest;
  }

  /** Reads the retained message on each node, once each, against `atLeast`. */
  async probe(nodes: readonly BrokerNode[], atLeast: number): Promise<void> {
    await Promise.all(
      nodes.map(async (node) => {
        let payload;
        try {
          payload = await readRetained(node, this.topic, RETAINED_WAIT_MS);
        } catch {
          this.unreachable++;
          return;
        }
        const value = payload === null ? null : Number(payload.toString());
        this.reads.push({ node: node.id, at: performance.now(), value, atLeast });
      }),
    );
  }

  /** Reads that came back empty or older than they had to be. */
  stale(): RetainedRead[] {
    return this.reads.filter((read) => read.value === null || read.value < read.atLeast);
  }
}

/** What a shared subscription's members got, together: each message is the group's, not a member's. */
export interface GroupVerdict {
  /** Acknowledged messages no member got. */
  readonly lost: number[];
  /** Messages the group got more than once, and of those, the ones whose later copy came without DUP. */
  readonly repeats: number;
  readonly repeatsWithoutDup: number[];
  /** Each copy of message `n`: which member, its packet id and DUP, and when. */
  copies(n: number): string;
}

export function judgeGroup(acked: readonly number[], members: readonly Device[]): GroupVerdict {
  const all = members
    .flatMap((member) => member.seen.map((m) => ({ ...m, member: member.client.options.clientId ?? '' })))
    .sort((a, b) => a.at - b.at);
  const copies = new Map<number, (typeof all)[number][]>();
  for (const m of all) copies.set(m.n, [...(copies.get(m.n) ?? []), m]);
  return {
    lost: acked.filter((n) => !copies.has(n)),
    repeats: all.length - copies.size,
    repeatsWithoutDup: [...copies].filter(([, c]) => c.slice(1).some((m) => !m.dup)).map(([n]) => n),
    copies: (n) =>
      (copies.get(n) ?? [])
        .map((m) => `${m.member} #${m.packetId}${m.dup ? ' DUP' : ''} at ${Math.round(m.at)}`)
        .join(', '),
  };
}

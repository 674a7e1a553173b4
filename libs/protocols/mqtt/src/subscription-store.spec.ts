import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Subscription } from './subscription.js';
import { SubscriptionStore } from './subscription-store.js';
import { parseFilter } from './topic-filter.js';

function sub(raw: string, qos: 0 | 1 | 2 = 0): Subscription {
  const { group, filter } = parseFilter(raw);
  return {
    raw,
    filter,
    group,
    qos,
    noLocal: false,
    retainAsPublished: false,
    retainHandling: 0,
    subscriptionId: null,
  };
}

const everyoneOnline = (): boolean => true;

function matched(store: SubscriptionStore, topic: string, online = everyoneOnline): string[] {
  return store
    .match(topic, online)
    .map((m) => `${m.clientId}:${m.subscription.raw}`)
    .sort();
}

describe('SubscriptionStore', () => {
  it('says when a filter gets its first member and loses its last, direct and shared alike', () => {
    const store = new SubscriptionStore();
    const events: string[] = [];
    store.onFilter = (filter, present) => events.push(`${present ? '+' : '-'}${filter}`);
    store.add('a', sub('x/#'));
    store.add('b', sub('x/#'));
    store.add('a', sub('x/#', 1));
    store.add('c', sub('$share/g/x/#'));
    store.add('c', sub('y'));
    assert.deepEqual([...store.filters()].sort(), ['x/#', 'y']);
    store.remove('a', sub('x/#'));
    store.remove('b', sub('x/#'));
    store.remove('b', sub('x/#'));
    store.remove('c', sub('$share/g/x/#'));
    store.remove('c', sub('y'));
    assert.deepEqual(events, ['+x/#', '+y', '-x/#', '-y']);
    assert.deepEqual([...store.filters()], []);
  });

  it('matches exact levels, + and #, including # matching the parent level', () => {
    const store = new SubscriptionStore();
    store.add('a', sub('x/y'));
    store.add('b', sub('x/+'));
    store.add('c', sub('x/#'));
    store.add('d', sub('#'));
    store.add('e', sub('+/+/z'));
    assert.deepEqual(matched(store, 'x/y'), ['a:x/y', 'b:x/+', 'c:x/#', 'd:#']);
    assert.deepEqual(matched(store, 'x'), ['c:x/#', 'd:#']);
    assert.deepEqual(matched(store, 'x/y/z'), ['c:x/#', 'd:#', 'e:+/+/z']);
  });

  it('does not match $-topics with a leading wildcard', () => {
    const store = new SubscriptionStore();
    store.add('a', sub('#'));
    store.add('b', sub('+/broker/uptime'));
    store.add('c', sub('$SYS/#'));
    assert.deepEqual(matched(store, '$SYS/broker/uptime'), ['c:$SYS/#']);
  });

  it('replaces a client subscription to the same filter and removes it cleanly', () => {
    const store = new SubscriptionStore();
    store.add('a', sub('x/+', 0));
    store.add('a', sub('x/+', 2));
    assert.equal(store.size, 1);
    assert.equal(store.match('x/1', everyoneOnline)[0]?.subscription.qos, 2);
    store.remove('a', sub('x/+'));
    assert.equal(store.size, 0);
    assert.deepEqual(matched(store, 'x/1'), []);
  });

  it('gives each message of a shared group to one member, round robin, preferring connected members', () => {
    const store = new SubscriptionStore();
    store.add('a', sub('$share/g/jobs'));
    store.add('b', sub('$share/g/jobs'));
    store.add('c', sub('$share/g/jobs'));
    const picks = [1, 2, 3, 4, 5, 6].map(() => store.match('jobs', everyoneOnline)[0]?.clientId);
    assert.deepEqual(picks, ['a', 'b', 'c', 'a', 'b', 'c']);
    const onlyB = (id: string): boolean => id === 'b';
    assert.deepEqual(
      [1, 2].map(() => store.match('jobs', onlyB)[0]?.clientId),
      ['b', 'b'],
    );
    assert.equal(store.match('jobs', () => false).length, 1, 'nobody online: still queued to one member');
  });

  it('two groups on one filter each get the message, alongside plain subscribers', () => {
    const store = new SubscriptionStore();
    store.add('a', sub('$share/g1/t'));
    store.add('b', sub('$share/g2/t'));
    store.add('c', sub('t'));
    assert.deepEqual(matched(store, 't'), ['a:$share/g1/t', 'b:$share/g2/t', 'c:t']);
  });
});

describe('SubscriptionStore with shared groups served elsewhere (cluster mode)', () => {
  it('leaves groups out of matches and filter events, and lists their members', () => {
    const store = new SubscriptionStore();
    store.sharedElsewhere = true;
    const events: string[] = [];
    store.onFilter = (filter, present) => events.push(`${present ? '+' : '-'}${filter}`);
    store.add('a', sub('$share/g/jobs/#', 1));
    store.add('b', sub('$share/g/jobs/#', 0));
    store.add('c', sub('jobs/#'));
    assert.deepEqual(matched(store, 'jobs/1'), ['c:jobs/#']);
    assert.deepEqual(events, ['+jobs/#']);
    assert.deepEqual([...store.groupMembers('g', 'jobs/#').keys()].sort(), ['a', 'b']);
    assert.equal(store.groupMembers('g', 'jobs/+').size, 0);
    assert.equal(store.groupMembers('h', 'jobs/#').size, 0);
    store.remove('a', sub('$share/g/jobs/#', 1));
    store.remove('b', sub('$share/g/jobs/#', 0));
    store.remove('c', sub('jobs/#'));
    assert.deepEqual(events, ['+jobs/#', '-jobs/#']);
    assert.equal(store.size, 0);
  });
});

describe('SubscriptionStore.everyMatch (what an operator sees)', () => {
  it('lists every member of every matching group and moves no round robin, in cluster mode too', () => {
    for (const sharedElsewhere of [false, true]) {
      const store = new SubscriptionStore();
      store.sharedElsewhere = sharedElsewhere;
      store.add('a', sub('$share/g/t/+'));
      store.add('b', sub('$share/g/t/+'));
      store.add('c', sub('t/#'));
      store.add('d', sub('other/#'));
      const every = () =>
        store
          .everyMatch('t/1')
          .map((m) => `${m.clientId}:${m.subscription.raw}`)
          .sort();
      assert.deepEqual(every(), ['a:$share/g/t/+', 'b:$share/g/t/+', 'c:t/#']);
      assert.deepEqual(every(), ['a:$share/g/t/+', 'b:$share/g/t/+', 'c:t/#']);
      assert.deepEqual(store.everyMatch('$SYS/t'), []);
      if (!sharedElsewhere) {
        // The group's next message still goes to its first member: everyMatch took no turn.
        assert.deepEqual(matched(store, 't/1'), ['a:$share/g/t/+', 'c:t/#']);
      }
    }
  });
});

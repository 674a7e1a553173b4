import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BusMessage, BusSubscription } from './bus.js';
import { InMemoryTopicBus } from './in-memory-topic-bus.js';
import { InvalidTopicError, topicMatches } from './topic.js';

const PAYLOAD = new Uint8Array([1, 2, 3]);

function message(topic: string): BusMessage {
  return { topic, payload: PAYLOAD, origin: 'test' };
}

/** Subscribes one recording handler per filter and returns what each received. */
function record(bus: InMemoryTopicBus, filters: readonly string[]): Map<string, string[]> {
  const received = new Map<string, string[]>();
  for (const filter of filters) {
    const topics: string[] = [];
    received.set(filter, topics);
    bus.subscribe(filter, (m) => topics.push(m.topic));
  }
  return received;
}

/** Every string of up to `maxLength` symbols from `alphabet`. */
function strings(alphabet: readonly string[], maxLength: number): string[] {
  let layer = [''];
  const all: string[] = [];
  for (let length = 1; length <= maxLength; length++) {
    layer = layer.flatMap((prefix) => alphabet.map((symbol) => prefix + symbol));
    all.push(...layer);
  }
  return all;
}

describe('InMemoryTopicBus matching', () => {
  it('agrees with topicMatches for every filter and topic over a small alphabet', () => {
    const isValidFilter = (f: string): boolean => /^(?:(?:[^/+#]*|\+)\/)*(?:[^/+#]*|\+|#)$/.test(f);
    const filters = strings(['a', '$', '/', '+', '#'], 5).filter(isValidFilter);
    const topics = strings(['a', 'b', '$', '/'], 5);
    const bus = new InMemoryTopicBus();
    const received = record(bus, filters);
    let expectedTotal = 0;
    for (const topic of topics) {
      const expected = filters.filter((filter) => topicMatches(filter, topic)).length;
      expectedTotal += expected;
      assert.equal(bus.publish(message(topic)), expected, topic);
    }
    let actualTotal = 0;
    for (const [filter, got] of received) {
      actualTotal += got.length;
      assert.deepEqual(
        got,
        topics.filter((topic) => topicMatches(filter, topic)),
        filter,
      );
    }
    assert.equal(actualTotal, expectedTotal);
    assert.ok(filters.length > 200 && expectedTotal > 1000, 'the corpus should exercise many matches');
  });

  it('hides $ topics from filters that start with a wildcard', () => {
    const bus = new InMemoryTopicBus();
    const received = record(bus, ['#', '+', '+/+', '+/#', '$SYS/#', '$SYS/+', '$SYS']);
    assert.equal(bus.publish(message('$SYS/uptime')), 2);
    assert.equal(bus.publish(message('$SYS')), 2);
    assert.equal(bus.publish(message('a/$SYS')), 3);
    assert.deepEqual(received.get('#'), ['a/$SYS']);
    assert.deepEqual(received.get('+'), []);
    assert.deepEqual(received.get('$SYS/#'), ['$SYS/uptime', '$SYS']);
    assert.deepEqual(received.get('$SYS/+'), ['$SYS/uptime']);
    assert.deepEqual(received.get('$SYS'), ['$SYS']);
  });

  it('treats empty levels as levels', () => {
    const bus = new InMemoryTopicBus();
    const received = record(bus, ['a//b', 'a/+/b', '/a', '+/a', '/', 'a/']);
    assert.equal(bus.publish(message('a//b')), 2);
    assert.equal(bus.publish(message('a/b')), 0);
    assert.equal(bus.publish(message('/a')), 2);
    assert.equal(bus.publish(message('/')), 1);
    assert.equal(bus.publish(message('a/')), 1);
    assert.deepEqual(received.get('a/+/b'), ['a//b']);
    assert.deepEqual(received.get('+/a'), ['/a']);
  });

  it('passes the message object itself to handlers', () => {
    const bus = new InMemoryTopicBus();
    const sent: BusMessage = {
      topic: 't',
      payload: PAYLOAD,
      contentType: 'application/json',
      origin: 'mqtt',
      principal: 'alice',
    };
    let got: BusMessage | undefined;
    bus.subscribe('t', (m) => (got = m));
    bus.publish(sent);
    assert.equal(got, sent);
  });

  it('walks deep topics without recursion', () => {
    const bus = new InMemoryTopicBus();
    const deep = '/'.repeat(60000);
    const received = record(bus, [deep, '+/'.repeat(30000) + '#']);
    assert.equal(bus.publish(message(deep)), 2);
    assert.equal(received.get(deep)?.length, 1);
  });
});

describe('InMemoryTopicBus publish and subscribe', () => {
  it('returns the number of handlers delivered to', () => {
    const bus = new InMemoryTopicBus();
    assert.equal(bus.publish(message('a/b')), 0);
    bus.subscribe('a/b', () => undefined);
    bus.subscribe('a/+', () => undefined);
    bus.subscribe('#', () => undefined);
    bus.subscribe('a/c', () => undefined);
    assert.equal(bus.publish(message('a/b')), 3);
    assert.equal(bus.publish(message('a/c')), 3);
    assert.equal(bus.publish(message('b')), 1);
  });

  it('counts what a bridging handler says it reached instead of one', () => {
    const bus = new InMemoryTopicBus();
    bus.subscribe('a/#', () => ({ reached: 3 }));
    bus.subscribe('a/b', () => ({ reached: 0 }));
    bus.subscribe('#', () => 7); // a number is no reach: one receiver
    assert.equal(bus.publish(message('a/b')), 4);
    assert.equal(bus.publish(message('c')), 1);
  });

  it('delivers once per subscription when a handler subscribes with overlapping filters', () => {
    const bus = new InMemoryTopicBus();
    let calls = 0;
    const handler = (): void => {
      calls++;
    };
    const first = bus.subscribe('a/b', handler);
    bus.subscribe('a/b', handler);
    bus.subscribe('a/#', handler);
    assert.equal(bus.publish(message('a/b')), 3);
    assert.equal(calls, 3);
    first.unsubscribe();
    assert.equal(bus.publish(message('a/b')), 2);
    assert.equal(calls, 5);
  });

  it('rejects invalid topics and filters without changing state', () => {
    const bus = new InMemoryTopicBus();
    assert.throws(() => bus.publish(message('a/+')), InvalidTopicError);
    assert.throws(() => bus.publish(message('')), /Invalid topic name "": must not be empty/);
    assert.throws(() => bus.subscribe('a/#/b', () => undefined), /Invalid topic filter "a\/#\/b"/);
    assert.throws(() => bus.subscribe('a+', () => undefined), InvalidTopicError);
    assert.equal(bus.subscriptionCount, 0);
    assert.equal(bus.nodeCount, 1);
  });
});

describe('InMemoryTopicBus unsubscribe', () => {
  it('stops delivery and prunes every node it no longer needs', () => {
    const bus = new InMemoryTopicBus();
    const filters = ['a/b/c', 'a/b/#', 'a/+/c', '+/#', 'a//', '#', 'x'];
    const subscriptions = filters.map((filter) => bus.subscribe(filter, () => undefined));
    assert.equal(bus.subscriptionCount, filters.length);
    // root, a, a/b, a/b/c, a/+, a/+/c, +, a/'', a//'' and x
    assert.equal(bus.nodeCount, 10);
    for (const subscription of subscriptions) subscription.unsubscribe();
    assert.equal(bus.subscriptionCount, 0);
    assert.equal(bus.nodeCount, 1);
    assert.equal(bus.publish(message('a/b/c')), 0);
  });

  it('keeps nodes still used by other filters or subscriptions', () => {
    const bus = new InMemoryTopicBus();
    const deep = bus.subscribe('a/b/c', () => undefined);
    const twin = bus.subscribe('a/b/c', () => undefined);
    const shallow = bus.subscribe('a/#', () => undefined);
    assert.equal(bus.nodeCount, 4);
    deep.unsubscribe();
    assert.equal(bus.nodeCount, 4);
    twin.unsubscribe();
    assert.equal(bus.nodeCount, 2);
    assert.equal(bus.publish(message('a/b/c')), 1);
    shallow.unsubscribe();
    assert.equal(bus.nodeCount, 1);
  });

  it('is harmless when called twice', () => {
    const bus = new InMemoryTopicBus();
    const first = bus.subscribe('a', () => undefined);
    bus.subscribe('a', () => undefined);
    first.unsubscribe();
    first.unsubscribe();
    assert.equal(bus.subscriptionCount, 1);
    assert.equal(bus.publish(message('a')), 1);
  });
});

describe('InMemoryTopicBus handler failures', () => {
  it('keeps delivering after a handler throws and reports the error', () => {
    const reported: [unknown, BusMessage][] = [];
    const bus = new InMemoryTopicBus({ onHandlerError: (error, m) => reported.push([error, m]) });
    const failure = new Error('boom');
    const received: string[] = [];
    bus.subscribe('a', () => received.push('before'));
    bus.subscribe('a', () => {
      throw failure;
    });
    bus.subscribe('+', () => received.push('wildcard'));
    bus.subscribe('a', () => received.push('after'));
    const sent = message('a');
    assert.equal(bus.publish(sent), 4);
    assert.deepEqual(received.sort(), ['after', 'before', 'wildcard']);
    assert.deepEqual(reported, [[failure, sent]]);
  });

  it('survives a throwing error reporter and a missing one', () => {
    const throwing = new InMemoryTopicBus({
      onHandlerError: () => {
        throw new Error('reporter');
      },
    });
    const silent = new InMemoryTopicBus();
    for (const bus of [throwing, silent]) {
      let reached = false;
      bus.subscribe('a', () => {
        throw new Error('handler');
      });
      bus.subscribe('a', () => (reached = true));
      assert.equal(bus.publish(message('a')), 2);
      assert.ok(reached);
    }
  });

  it('reports rejections of async handlers instead of leaving them unhandled', async () => {
    const failure = new Error('async boom');
    const reported = new Promise<unknown>((resolve) => {
      const bus = new InMemoryTopicBus({ onHandlerError: (error) => resolve(error) });
      bus.subscribe('a', async () => {
        await Promise.resolve();
        throw failure;
      });
      assert.equal(bus.publish(message('a')), 1);
    });
    assert.equal(await reported, failure);
  });
});

describe('InMemoryTopicBus changes during delivery', () => {
  it('does not deliver the current message to subscriptions made during its delivery', () => {
    const bus = new InMemoryTopicBus();
    const late: string[] = [];
    let subscribed = 0;
    // Subscribing on every delivery would loop forever if new subscriptions saw the current message.
    bus.subscribe('a/+', () => {
      subscribed++;
      bus.subscribe('a/b', () => late.push('exact'));
      bus.subscribe('a/+', () => late.push('plus'));
      bus.subscribe('#', () => late.push('hash'));
    });
    assert.equal(bus.publish(message('a/b')), 1);
    assert.deepEqual(late, []);
    assert.equal(subscribed, 1);
    assert.equal(bus.publish(message('a/b')), 4);
    assert.deepEqual(late.sort(), ['exact', 'hash', 'plus']);
  });

  it('does not call subscriptions cancelled earlier in the same delivery', () => {
    const bus = new InMemoryTopicBus();
    const calls: string[] = [];
    const victims: BusSubscription[] = [];
    // Subscribed first, so it runs before the victims that share its filter.
    const killer = bus.subscribe('a', () => {
      calls.push('killer');
      for (const victim of victims) victim.unsubscribe();
      killer.unsubscribe();
    });
    for (const filter of ['a', 'a', '+', '#']) victims.push(bus.subscribe(filter, () => calls.push(filter)));
    const delivered = bus.publish(message('a'));
    assert.ok(calls.includes('killer'));
    assert.ok(!calls.includes('a'), 'victims after the killer in the same node must be skipped');
    assert.equal(delivered, calls.length);
    assert.equal(bus.subscriptionCount, 0);
    assert.equal(bus.nodeCount, 1);
    assert.equal(bus.publish(message('a')), 0);
  });

  it('supports publishing from inside a handler', () => {
    const bus = new InMemoryTopicBus();
    const received: string[] = [];
    bus.subscribe('in/+', (m) => {
      received.push(m.topic);
      assert.equal(bus.publish(message(`out/${m.topic.slice(3)}`)), 2);
    });
    bus.subscribe('out/#', (m) => received.push(m.topic));
    bus.subscribe('+/x', (m) => received.push(`wild ${m.topic}`));
    assert.equal(bus.publish(message('in/x')), 2);
    assert.deepEqual(received.sort(), ['in/x', 'out/x', 'wild in/x', 'wild out/x']);
  });

  it('recovers its walk state after a nested publish throws', () => {
    const bus = new InMemoryTopicBus();
    let outer = 0;
    bus.subscribe('a', () => {
      outer++;
      assert.throws(() => bus.publish(message('bad/+')), InvalidTopicError);
    });
    bus.subscribe('#', () => undefined);
    assert.equal(bus.publish(message('a')), 2);
    assert.equal(bus.publish(message('a')), 2);
    assert.equal(outer, 2);
  });
});

describe('InMemoryTopicBus share', () => {
  it('gives each message to one handler of a queue, in turn, next to ordinary subscriptions', () => {
    const bus = new InMemoryTopicBus();
    const a: string[] = [];
    const b: string[] = [];
    const everyone: string[] = [];
    bus.share('workers', 'jobs/+', (m) => void a.push(m.topic));
    const second = bus.share('workers', 'jobs/+', (m) => void b.push(m.topic));
    bus.subscribe('jobs/#', (m) => void everyone.push(m.topic));
    for (const n of [1, 2, 3, 4]) bus.publish(message(`jobs/${n}`));
    assert.deepEqual(a, ['jobs/1', 'jobs/3']);
    assert.deepEqual(b, ['jobs/2', 'jobs/4']);
    assert.equal(everyone.length, 4);
    second.unsubscribe();
    second.unsubscribe();
    bus.publish(message('jobs/5'));
    assert.deepEqual(a, ['jobs/1', 'jobs/3', 'jobs/5']);
  });

  it('keeps queues of another name or filter apart, and drops the queue with its last handler', () => {
    const bus = new InMemoryTopicBus();
    const got: string[] = [];
    const one = bus.share('q', 'a/#', () => void got.push('q a/#'));
    bus.share('r', 'a/#', () => void got.push('r a/#'));
    bus.share('q', 'a/b', () => void got.push('q a/b'));
    bus.publish(message('a/b'));
    assert.deepEqual(got.sort(), ['q a/#', 'q a/b', 'r a/#']);
    const before = bus.subscriptionCount;
    one.unsubscribe();
    assert.equal(bus.subscriptionCount, before - 1);
    assert.throws(() => bus.share('q', 'a/#/b', () => undefined), InvalidTopicError);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testRouter } from './testing.js';

describe('registrations', () => {
  it('shared registrations: roundrobin, first, last, random; mixed policies refused', () => {
    const { join } = testRouter();
    const callees = [join(), join(), join()];
    const caller = join();
    const rr = callees.map((c) => c.request([64, 1, { invoke: 'roundrobin' }, 'com.rr']));
    assert.deepEqual(new Set(rr.map((answer) => answer[0])), new Set([65]));
    assert.equal(
      join().request([64, 1, { invoke: 'first' }, 'com.rr'])[4],
      'wamp.error.procedure_already_exists',
    );
    const served = (uri: string, times: number): number[] => {
      const order: number[] = [];
      for (let i = 0; i < times; i++) {
        caller.receive([48, 100 + i, {}, uri]);
        callees.forEach((c, index) => {
          const [invocation] = c.take();
          if (invocation === undefined) return;
          order.push(index);
          c.receive([70, invocation[1], {}, []]);
        });
      }
      caller.take();
      return order;
    };
    assert.deepEqual(served('com.rr', 6), [0, 1, 2, 0, 1, 2]);
    // Three registrations per session in this router: make room.
    callees.forEach((c, i) => c.request([66, 9, rr[i]?.[2]]));
    for (const c of callees) c.request([64, 2, { invoke: 'first' }, 'com.first']);
    for (const c of callees) c.request([64, 3, { invoke: 'last' }, 'com.last']);
    for (const c of callees) c.request([64, 4, { invoke: 'random' }, 'com.random']);
    assert.deepEqual(served('com.first', 2), [0, 0]);
    assert.deepEqual(served('com.last', 2), [2, 2]);
    const random = served('com.random', 60);
    assert.equal(random.length, 60);
    assert.equal(new Set(random).size, 3, 'every callee gets some of 60 random calls');
  });

  it('pattern registrations: exact wins, then the longest prefix, then wildcard; Details carry the procedure', () => {
    const { join } = testRouter();
    const exact = join();
    const prefix = join();
    const longer = join();
    const wildcard = join();
    const caller = join();
    exact.request([64, 1, {}, 'com.a.b.c']);
    prefix.request([64, 1, { match: 'prefix' }, 'com.a']);
    longer.request([64, 1, { match: 'prefix' }, 'com.a.b']);
    wildcard.request([64, 1, { match: 'wildcard' }, 'com..x']);
    const who = (uri: string): [number, unknown] => {
      caller.receive([48, 1, {}, uri]);
      const index = [exact, prefix, longer, wildcard].findIndex((c) => c.sent.length > 0);
      const invocation = [exact, prefix, longer, wildcard][index]?.take()[0] as unknown[];
      [exact, prefix, longer, wildcard][index]?.receive([70, invocation[1], {}]);
      caller.take();
      return [index, invocation[3]];
    };
    assert.deepEqual(who('com.a.b.c'), [0, {}]);
    assert.deepEqual(who('com.a.b.d'), [2, { procedure: 'com.a.b.d' }]);
    assert.deepEqual(who('com.a.z'), [1, { procedure: 'com.a.z' }]);
    assert.deepEqual(who('com.y.x'), [3, { procedure: 'com.y.x' }]);
  });
  it('round robin goes on with the next callee when one leaves', () => {
    const { join } = testRouter();
    const callees = [join(), join(), join()];
    const caller = join();
    for (const c of callees) c.request([64, 1, { invoke: 'roundrobin' }, 'com.rr']);
    const serve = (): number => {
      caller.receive([48, 1, {}, 'com.rr']);
      const index = callees.findIndex((c) => c.sent.length > 0);
      const callee = callees[index];
      callee?.receive([70, callee.take()[0]?.[1], {}]);
      caller.take();
      return index;
    };
    assert.deepEqual([serve(), serve()], [0, 1]);
    callees[0]?.receive([6, {}, 'wamp.close.close_realm']);
    callees[0]?.take();
    assert.deepEqual([serve(), serve(), serve()], [2, 1, 2]);
  });
});

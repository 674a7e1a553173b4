import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Wampy } from 'wampy';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { connectWampy, deferred, openAutobahn, within } from './support/wamp-clients.js';

interface WampyError {
  readonly errorUri: string;
}

/** Calls until the registration made on another node is routable here (the record crosses by KV watch). */
async function untilCallable(wampy: Wampy, uri: string): Promise<unknown> {
  let last: unknown;
  await until(
    `${uri} is callable`,
    async () => {
      try {
        last = await wampy.call(uri, [1, 2]);
        return true;
      } catch (err) {
        if ((err as WampyError).errorUri !== 'wamp.error.no_such_procedure') throw err;
        return false;
      }
    },
    5000,
  );
  return last;
}

describe('cluster: WAMP RPC across nodes', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(3);
  });
  after(() => cluster?.close());

  it('a procedure registered on one node is callable from the others, with errors and caller disclosure', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const callee = await openAutobahn(`${n2.url}/ws`);
    await callee.session.register('com.example.add', (args) => (args[0] as number) + (args[1] as number));
    await callee.session.register('com.example.fail', () => {
      throw new Error('no good');
    });
    await callee.session.register(
      'com.example.who',
      (_args, _kwargs, details) => details.caller_authid ?? null,
    );
    const caller1 = await connectWampy(`${n1.url}/ws`);
    const caller3 = await connectWampy(`${n3.url}/ws`);
    assert.deepEqual(
      ((await untilCallable(caller1, 'com.example.add')) as { argsList: unknown[] }).argsList,
      [3],
    );
    assert.deepEqual(
      ((await untilCallable(caller3, 'com.example.add')) as { argsList: unknown[] }).argsList,
      [3],
    );
    await assert.rejects(caller1.call('com.example.fail'), (err: WampyError) => {
      assert.match(err.errorUri, /^wamp\.error\.runtime_error$|^wamp\.error\./);
      return true;
    });
    const who = (await caller1.call('com.example.who', [], { disclose_me: true })) as { argsList: unknown[] };
    assert.equal(typeof who.argsList[0], 'string');
    await assert.rejects(caller1.call('com.example.nothing'), (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.no_such_procedure');
      return true;
    });
    callee.close();
    await until(
      'the registration is gone everywhere',
      async () =>
        caller1.call('com.example.add', [1, 1]).then(
          () => false,
          (err: WampyError) => err.errorUri === 'wamp.error.no_such_procedure',
        ),
      5000,
    );
    await within('disconnect', caller1.disconnect());
    await within('disconnect', caller3.disconnect());
  });

  it('progressive results, cancel and the call timeout work across nodes', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const callee = await openAutobahn(`${n2.url}/ws`);
    await callee.session.register('com.example.count', (args, _kwargs, details) => {
      for (let i = 1; i < (args[0] as number); i++) details.progress?.([i]);
      return args[0];
    });
    const invoked = deferred<true>();
    await callee.session.register('com.example.never', () => {
      invoked.resolve(true);
      return new Promise(() => undefined);
    });
    const caller = await connectWampy(`${n1.url}/ws`);
    await untilCallable(caller, 'com.example.count');
    const progress: unknown[] = [];
    const final = (await caller.call('com.example.count', [4], {
      progress_callback: (r: { argsList?: unknown[] }) => {
        progress.push(r.argsList?.[0]);
      },
    })) as { argsList: unknown[] };
    assert.deepEqual(progress, [1, 2, 3]);
    assert.deepEqual(final.argsList, [4]);

    const call = caller.call('com.example.never');
    await within('the invocation on n2', invoked.promise);
    caller.cancel(caller.getOpStatus().reqId, { mode: 'killnowait' });
    await assert.rejects(call, (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.canceled');
      return true;
    });
    await assert.rejects(caller.call('com.example.never', [], { timeout: 100 }), (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.timeout');
      return true;
    });
    callee.close();
    await within('disconnect', caller.disconnect());
  });

  it('two nodes racing for one exclusive URI: exactly one wins', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const a = await openAutobahn(`${n1.url}/ws`);
    const b = await openAutobahn(`${n2.url}/ws`);
    const c = await openAutobahn(`${n3.url}/ws`);
    const outcomes = await Promise.allSettled([
      a.session.register('com.example.race', () => 'a'),
      b.session.register('com.example.race', () => 'b'),
      c.session.register('com.example.race', () => 'c'),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(won.length, 1, outcomes.map((o) => o.status).join(', '));
    for (const lost of outcomes.filter((o) => o.status === 'rejected')) {
      assert.match(String((lost as PromiseRejectedResult).reason?.error), /procedure_already_exists/);
    }
    const winner = ['a', 'b', 'c'][outcomes.findIndex((o) => o.status === 'fulfilled')];
    const caller = await connectWampy(`${n1.url}/ws`);
    assert.deepEqual(
      ((await untilCallable(caller, 'com.example.race')) as { argsList: unknown[] }).argsList,
      [winner],
    );
    a.close();
    b.close();
    c.close();
    await within('disconnect', caller.disconnect());
  });

  it("the callee's node killed mid-call: the caller gets wamp.error.canceled, and the URI is free again", async () => {
    const victim = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const callee = await openAutobahn(`${victim.url}/ws`);
    const invoked = deferred<true>();
    await callee.session.register('com.example.doomed', () => {
      invoked.resolve(true);
      return new Promise(() => undefined);
    });
    const caller = await connectWampy(`${n1.url}/ws`);
    // Called until a call reaches the callee (one that finds no route yet comes back with an ERROR).
    await until(
      'routable',
      async () => {
        const pending = caller.call('com.example.doomed').then(
          () => false,
          () => false,
        );
        return within('the call to be routed or refused', Promise.race([pending, invoked.promise]));
      },
      5000,
    );
    const inFlight = caller.call('com.example.doomed');
    await victim.kill();
    // Ended by the node's death, not by a timeout: the call has none.
    await assert.rejects(inFlight, (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.canceled');
      return true;
    });
    const heir = await openAutobahn(`${n2.url}/ws`);
    await until(
      'the dead node registration is freed',
      async () =>
        heir.session
          .register('com.example.doomed', () => 'heir')
          .then(
            () => true,
            () => false,
          ),
      5000,
    );
    assert.deepEqual(
      ((await untilCallable(caller, 'com.example.doomed')) as { argsList: unknown[] }).argsList,
      ['heir'],
    );
    heir.close();
    await within('disconnect', caller.disconnect());
  });
});

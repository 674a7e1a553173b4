import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Wampy } from 'wampy';
import { WampModule } from '#broker/protocols/wamp';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import {
  autobahn,
  connectWampy,
  deferred,
  openAutobahn,
  type OpenAutobahn,
  settled,
  within,
} from './support/wamp-clients.js';

interface WampyError {
  errorUri: string;
  argsList?: unknown[];
  argsDict?: Record<string, unknown>;
}

interface WampyEvent {
  argsList?: unknown[];
  argsDict?: Record<string, unknown>;
  details: Record<string, unknown>;
}

describe('wamp.2.json with real clients: wampy and autobahn', () => {
  let broker: TestBroker;
  let url: string;
  let wampy: Wampy;
  let ab: OpenAutobahn;

  before(async () => {
    broker = await startTestBroker(
      { endpoints: [{ path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' }] },
      [WampModule],
    );
    url = `${broker.url}/ws`;
    wampy = await connectWampy(url);
    ab = await openAutobahn(url);
  });

  after(async () => {
    await within('wampy to disconnect', wampy.disconnect());
    ab.close();
    await broker.close();
  });

  it('both join realm1 anonymously with distinct session IDs and the router roles', () => {
    const wampySession = wampy.getSessionId() ?? 0;
    assert.ok(Number.isInteger(wampySession) && wampySession > 0);
    assert.ok(Number.isInteger(ab.session.id) && ab.session.id !== wampySession);
    assert.equal(ab.details['authrole'], 'anonymous');
    const roles = ab.details['roles'] as Record<string, { features: Record<string, boolean> }>;
    assert.equal(roles['dealer']?.features['call_timeout'], true);
  });

  it('pub/sub from autobahn to wampy and back, with acknowledge', async () => {
    const atWampy = deferred<WampyEvent>();
    await wampy.subscribe('com.example.news', (event: WampyEvent) => atWampy.resolve(event));
    const atAutobahn = deferred<[unknown[], Record<string, unknown>]>();
    await ab.session.subscribe('com.example.replies', (args, kwargs) => atAutobahn.resolve([args, kwargs]));

    const ack = await ab.session.publish(
      'com.example.news',
      ['hello'],
      { from: 'autobahn' },
      { acknowledge: true },
    );
    assert.ok(Number.isInteger(ack?.id));
    const event = await within('the event at wampy', atWampy.promise);
    assert.deepEqual(event.argsList, ['hello']);
    assert.deepEqual(event.argsDict, { from: 'autobahn' });

    await wampy.publish('com.example.replies', { argsList: [1, 2], argsDict: { from: 'wampy' } });
    assert.deepEqual(await within('the event at autobahn', atAutobahn.promise), [[1, 2], { from: 'wampy' }]);
  });

  it('RPC both ways; callee errors pass through; unknown procedures', async () => {
    await ab.session.register('com.example.add', (args) => (args[0] as number) + (args[1] as number));
    const sum = (await wampy.call('com.example.add', [2, 3])) as { argsList: unknown[] };
    assert.deepEqual(sum.argsList, [5]);

    await wampy.register('com.example.upper', (input: WampyEvent) => ({
      argsList: [String(input.argsList?.[0]).toUpperCase()],
    }));
    assert.equal(await settled(ab.session.call('com.example.upper', ['shout'])), 'SHOUT');

    await ab.session.register('com.example.fail', () => {
      throw new autobahn.Error('com.example.error.nope', ['not today'], { code: 7 });
    });
    await assert.rejects(wampy.call('com.example.fail'), (err: WampyError) => {
      assert.equal(err.errorUri, 'com.example.error.nope');
      assert.deepEqual(err.argsList, ['not today']);
      assert.deepEqual(err.argsDict, { code: 7 });
      return true;
    });
    await assert.rejects(settled(ab.session.call('com.example.nothing')), (err: { error: string }) => {
      assert.equal(err.error, 'wamp.error.no_such_procedure');
      return true;
    });
    await assert.rejects(
      wampy.register('com.example.add', () => ({ argsList: [1] })),
      (err: WampyError) => {
        assert.equal(err.errorUri, 'wamp.error.procedure_already_exists');
        return true;
      },
    );
  });

  it('pattern subscriptions: prefix (wampy) and wildcard (autobahn) get the concrete topic', async () => {
    const prefix = deferred<WampyEvent>();
    await wampy.subscribe('com.sensors', (event: WampyEvent) => prefix.resolve(event), { match: 'prefix' });
    const wildcard = deferred<Record<string, unknown>>();
    await ab.session.subscribe('com.sensors..temperature', (_a, _k, details) => wildcard.resolve(details), {
      match: 'wildcard',
    });
    const third = await openAutobahn(url);
    await third.session.publish('com.sensors.kitchen.temperature', [21.5], {}, { acknowledge: true });
    assert.equal(
      (await within('prefix event', prefix.promise)).details['topic'],
      'com.sensors.kitchen.temperature',
    );
    assert.equal(
      (await within('wildcard event', wildcard.promise))['topic'],
      'com.sensors.kitchen.temperature',
    );
    third.close();
  });

  it('publisher exclusion and identification, subscriber black- and whitelisting', async () => {
    const got: string[] = [];
    const done = deferred<true>();
    await ab.session.subscribe('com.example.list', (args, _k, details) => {
      got.push(`${String(args[0])}:${String(details['publisher'] ?? '-')}`);
      if (args[0] === 'end') done.resolve(true);
    });
    const publish = (payload: string, options: Record<string, unknown>): Promise<unknown> =>
      wampy.publish('com.example.list', payload, options);
    await publish('excluded', { exclude: [ab.session.id] });
    await publish('not-eligible', { eligible: [wampy.getSessionId()] });
    await publish('role-excluded', { exclude_authrole: ['anonymous'] });
    await publish('eligible', { eligible: [ab.session.id], disclose_me: true });
    await publish('end', {});
    await within('the last event', done.promise);
    assert.deepEqual(got, [`eligible:${wampy.getSessionId()}`, 'end:-']);

    // The publisher is excluded from its own publication unless it says otherwise.
    const own: unknown[] = [];
    const ownDone = deferred<true>();
    await ab.session.subscribe('com.example.own', (args) => {
      own.push(args[0]);
      if (args[0] === 'included') ownDone.resolve(true);
    });
    await ab.session.publish('com.example.own', ['excluded'], {}, { acknowledge: true });
    await ab.session.publish('com.example.own', ['included'], {}, { acknowledge: true, exclude_me: false });
    await within('own event', ownDone.promise);
    assert.deepEqual(own, ['included']);
  });

  it('caller identification and progressive call results', async () => {
    await wampy.register('com.example.whoami', (input: WampyEvent) => ({
      argsList: [input.details['caller'], input.details['caller_authrole']],
    }));
    const abWho = (await settled(ab.session.call('com.example.whoami', [], {}, { disclose_me: true }))) as {
      args: unknown[];
    };
    assert.deepEqual(abWho.args, [ab.session.id, 'anonymous']);
    const who = (await wampy.call('com.example.whoami', [], { disclose_me: true })) as {
      argsList: unknown[];
    };
    assert.deepEqual(who.argsList, [wampy.getSessionId(), 'anonymous']);

    await ab.session.register('com.example.count', (args, _k, details) => {
      for (let i = 1; i < (args[0] as number); i++) details.progress?.([i]);
      return args[0];
    });
    const progress: unknown[] = [];
    const final = (await wampy.call('com.example.count', [3], {
      progress_callback: (r: { argsList?: unknown[] }) => {
        progress.push(r.argsList?.[0]);
      },
    })) as { argsList: unknown[] };
    assert.deepEqual(progress, [1, 2]);
    assert.deepEqual(final.argsList, [3]);
    const abProgress: unknown[] = [];
    assert.equal(
      await settled(ab.session.call('com.example.count', [4], {}, { receive_progress: true }), (v) =>
        abProgress.push(v),
      ),
      4,
    );
    assert.deepEqual(abProgress, [1, 2, 3]);
  });

  it('call canceling and call timeout', async () => {
    const invoked = deferred<true>();
    await ab.session.register('com.example.never', () => {
      invoked.resolve(true);
      return new Promise(() => undefined);
    });
    const call = wampy.call('com.example.never');
    await within('the invocation', invoked.promise);
    wampy.cancel(wampy.getOpStatus().reqId, { mode: 'killnowait' });
    await assert.rejects(call, (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.canceled');
      return true;
    });
    await assert.rejects(wampy.call('com.example.never', [], { timeout: 50 }), (err: WampyError) => {
      assert.equal(err.errorUri, 'wamp.error.timeout');
      return true;
    });
  });

  it('shared registrations: round robin over three callees', async () => {
    const callees = await Promise.all([openAutobahn(url), openAutobahn(url), openAutobahn(url)]);
    await Promise.all(
      callees.map((c, i) => c.session.register('com.example.shared', () => i, { invoke: 'roundrobin' })),
    );
    const served: unknown[] = [];
    for (let i = 0; i < 6; i++)
      served.push(((await wampy.call('com.example.shared')) as { argsList: unknown[] }).argsList[0]);
    assert.deepEqual(served, [0, 1, 2, 0, 1, 2]);
    await assert.rejects(
      wampy.register('com.example.shared', () => ({ argsList: [1] }), { invoke: 'random' }),
      (err: WampyError) => {
        assert.equal(err.errorUri, 'wamp.error.procedure_already_exists');
        return true;
      },
    );
    for (const c of callees) c.close();
  });

  it('pattern registrations (prefix, wildcard) with the concrete procedure; first and last callee', async () => {
    await wampy.register(
      'com.api.users',
      (input: WampyEvent) => ({ argsList: ['prefix', input.details['procedure']] }),
      { match: 'prefix' },
    );
    await ab.session.register('com.api..get', (_a, _k, details) => `wildcard ${details.procedure ?? ''}`, {
      match: 'wildcard',
    });
    assert.deepEqual(((await settled(ab.session.call('com.api.users.list'))) as { args: unknown[] }).args, [
      'prefix',
      'com.api.users.list',
    ]);
    const viaPrefix = (await wampy.call('com.api.users.get')) as { argsList: unknown[] };
    assert.deepEqual(viaPrefix.argsList, ['prefix', 'com.api.users.get'], 'a prefix match beats a wildcard');
    assert.deepEqual(((await wampy.call('com.api.items.get')) as { argsList: unknown[] }).argsList, [
      'wildcard com.api.items.get',
    ]);

    const callees = await Promise.all([openAutobahn(url), openAutobahn(url)]);
    for (const [policy, expected] of [
      ['first', 0],
      ['last', 1],
    ] as const) {
      for (const [i, c] of callees.entries()) {
        await c.session.register(`com.example.${policy}`, () => i, { invoke: policy });
      }
      for (let n = 0; n < 2; n++) {
        assert.equal(
          ((await wampy.call(`com.example.${policy}`)) as { argsList: unknown[] }).argsList[0],
          expected,
        );
      }
    }
    for (const c of callees) c.close();
  });

  it('session meta API: on_join, on_leave, count, list, get', async () => {
    const joined = deferred<Record<string, unknown>>();
    const left = deferred<unknown[]>();
    await ab.session.subscribe('wamp.session.on_join', (args) =>
      joined.resolve(args[0] as Record<string, unknown>),
    );
    await ab.session.subscribe('wamp.session.on_leave', (args) => left.resolve(args));
    const before = (await settled(ab.session.call('wamp.session.count'))) as number;
    const newcomer = await connectWampy(url);
    const info = await within('on_join', joined.promise);
    assert.equal(info['session'], newcomer.getSessionId());
    assert.equal(await settled(ab.session.call('wamp.session.count')), before + 1);
    assert.ok(
      ((await settled(ab.session.call('wamp.session.list'))) as number[]).includes(
        newcomer.getSessionId() ?? 0,
      ),
    );
    const got = (await settled(ab.session.call('wamp.session.get', [newcomer.getSessionId()]))) as Record<
      string,
      unknown
    >;
    assert.equal(got['authrole'], 'anonymous');
    const id = newcomer.getSessionId();
    await within('newcomer to leave', newcomer.disconnect());
    assert.equal((await within('on_leave', left.promise))[0], id);
    await assert.rejects(settled(ab.session.call('wamp.session.get', [id])), (err: { error: string }) => {
      assert.equal(err.error, 'wamp.error.no_such_session');
      return true;
    });
  });
});

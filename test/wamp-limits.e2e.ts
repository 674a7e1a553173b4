import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WampModule } from '#broker/protocols/wamp';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { RawWamp } from './support/wamp-raw.js';

describe('wamp.2.json limits from the configuration, and shutdown', () => {
  let broker: TestBroker;
  let url: string;
  let closed = false;

  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [{ path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' }],
        wamp: {
          limits: {
            maxSubscriptionsPerSession: 2,
            maxRegistrationsPerSession: 1,
            maxPendingCallsPerSession: 1,
            authTimeoutMs: 300,
          },
        },
      },
      [WampModule],
    );
    url = `${broker.url}/ws`;
  });

  after(async () => {
    if (!closed) await broker.close();
  });

  it('subscriptions, registrations and calls in flight per session', async () => {
    const { client } = await RawWamp.join(url);
    assert.equal((await client.request([32, 1, {}, 'com.a']))[0], 33);
    assert.equal((await client.request([32, 2, {}, 'com.b']))[0], 33);
    assert.deepEqual((await client.request([32, 3, {}, 'com.c'])).slice(0, 5), [
      8,
      32,
      3,
      {},
      'broker.error.limit_exceeded',
    ]);
    assert.equal((await client.request([64, 4, {}, 'com.p']))[0], 65);
    assert.equal((await client.request([64, 5, {}, 'com.q']))[4], 'broker.error.limit_exceeded');

    const { client: caller } = await RawWamp.join(url);
    caller.send([48, 1, {}, 'com.p']);
    assert.equal((await client.next())[0], 68, 'the callee got the first call');
    const refused = await caller.request([48, 2, {}, 'com.p']);
    assert.equal(refused[4], 'broker.error.limit_exceeded');
    assert.match(String((refused[5] as unknown[])[0]), /at most 1 calls in flight/);
    client.close();
    caller.close();
  });

  it('a client that never says HELLO is aborted after authTimeoutMs', async () => {
    const client = await RawWamp.connect(url);
    const abort = await client.next();
    assert.equal(abort[0], 3);
    assert.match((abort[1] as { message: string }).message, /no WELCOME within 300 ms/);
    await client.closed;
  });

  it('at shutdown, open sessions get GOODBYE system_shutdown before the close', async () => {
    const { client } = await RawWamp.join(url);
    const goodbye = client.next();
    closed = true;
    await broker.close();
    assert.deepEqual(await goodbye, [6, {}, 'wamp.close.system_shutdown']);
    assert.equal((await client.closed).code, 1001);
  });
});

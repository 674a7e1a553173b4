import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { WampModule } from '#broker/protocols/wamp';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { CLIENT_ROLES, RawWamp } from './support/wamp-raw.js';
import { refusedStatus } from './support/ws-helpers.js';

const HELLO = [1, 'realm1', { roles: CLIENT_ROLES }];

describe('wamp.2.json: sessions and protocol violations over raw ws', () => {
  let broker: TestBroker;
  let url: string;
  let bystander: RawWamp;
  let bystanderSubscription: number;

  before(async () => {
    broker = await startTestBroker(
      { endpoints: [{ path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' }] },
      [WampModule],
    );
    url = `${broker.url}/ws`;
    bystander = (await RawWamp.join(url)).client;
    const subscribed = await bystander.request([32, 1, {}, 'com.example.alive']);
    assert.equal(subscribed[0], 33);
    bystanderSubscription = subscribed[2] as number;
  });

  after(async () => {
    // The bystander saw none of the violations: it still gets events.
    const { client: publisher } = await RawWamp.join(url);
    publisher.send([16, 1, {}, 'com.example.alive', ['still here']]);
    const event = await bystander.next();
    assert.deepEqual([event[0], event[1], event[4]], [36, bystanderSubscription, ['still here']]);
    publisher.close();
    bystander.close();
    await broker.close();
  });

  async function expectViolation(
    client: RawWamp,
    send: unknown[] | string | Buffer,
    message: RegExp,
    code = 1002,
  ): Promise<void> {
    client.send(send);
    const abort = await client.next();
    assert.equal(abort[0], 3);
    assert.equal(abort[2], 'wamp.error.protocol_violation');
    assert.match((abort[1] as { message: string }).message, message);
    assert.equal((await client.closed).code, code);
  }

  it('refuses a handshake that offers no WAMP subprotocol with 400', async () => {
    assert.equal(await refusedStatus(new WebSocket(url)), 400);
    assert.equal(await refusedStatus(new WebSocket(url, 'chat.v1')), 400);
  });

  it('welcomes a HELLO with a session ID, the router roles and the anonymous identity', async () => {
    const { client, welcome } = await RawWamp.join(url);
    const [type, session, details] = welcome as [number, number, Record<string, unknown>];
    assert.equal(type, 2);
    assert.ok(Number.isInteger(session) && session >= 1 && session <= 2 ** 53);
    assert.equal(details['authrole'], 'anonymous');
    assert.equal(details['authmethod'], 'anonymous');
    assert.match(details['authid'] as string, /^anonymous-/);
    const roles = details['roles'] as Record<string, { features: Record<string, boolean> }>;
    assert.deepEqual(Object.keys(roles).sort(), ['broker', 'dealer']);
    assert.equal(roles['dealer']?.features['shared_registration'], true);
    assert.equal(roles['broker']?.features['pattern_based_subscription'], true);
    client.close();
  });

  it('answers GOODBYE with goodbye_and_out, then accepts a new HELLO', async () => {
    const { client } = await RawWamp.join(url);
    assert.deepEqual(await client.request([6, {}, 'wamp.close.close_realm']), [
      6,
      {},
      'wamp.close.goodbye_and_out',
    ]);
    assert.equal((await client.request(HELLO))[0], 2);
    client.close();
  });

  it('aborts a HELLO for an unknown realm with no_such_realm', async () => {
    const client = await RawWamp.connect(url);
    const abort = await client.request([1, 'no.such.realm', { roles: CLIENT_ROLES }]);
    assert.equal(abort[0], 3);
    assert.equal(abort[2], 'wamp.error.no_such_realm');
    await client.closed;
  });

  it('does not answer an ABORT, and closes', async () => {
    const { client } = await RawWamp.join(url);
    client.send([3, { message: 'bye' }, 'wamp.close.system_shutdown']);
    const close = await client.closed;
    assert.equal(close.code, 1000);
  });

  it('undecodable JSON', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, '[1, "realm1", {', /not valid JSON/);
  });

  it('a message that is not an array', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, '{"type":1}', /non-empty JSON array/);
  });

  it('an unknown message type', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, [99, 1, {}], /unknown or unexpected message type 99/);
  });

  it('a router-to-client message type sent by the client', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, [36, 1, 2, {}], /unknown or unexpected message type 36/);
  });

  it('a message before WELCOME', async () => {
    const client = await RawWamp.connect(url);
    await expectViolation(client, [32, 1, {}, 'com.example.topic'], /SUBSCRIBE before WELCOME/);
  });

  it('a second HELLO', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, HELLO, /HELLO in an established session/);
  });

  it('a YIELD for an unknown invocation', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, [70, 12345, {}, ['x']], /YIELD for unknown invocation 12345/);
  });

  it('an ERROR for a message type other than INVOCATION', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, [8, 48, 1, {}, 'com.example.error'], /ERROR may only answer an INVOCATION/);
  });

  it('a malformed message of a known type, and an ID out of range', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, [32, 1, 'options', 'com.example.topic'], /malformed SUBSCRIBE/);
    const { client: other } = await RawWamp.join(url);
    await expectViolation(other, [32, 2 ** 53 + 2, {}, 'com.example.topic'], /malformed SUBSCRIBE/);
  });

  it('a message nested 5,000 deep (10 KB): a protocol violation, not an internal error', async () => {
    const { client } = await RawWamp.join(url);
    const deep = `[16, 1, {}, "com.example.deep", ${'['.repeat(5000)}${']'.repeat(5000)}]`;
    await expectViolation(client, deep, /nested deeper than/);
  });

  it('a binary frame: ABORT, then close 1003', async () => {
    const { client } = await RawWamp.join(url);
    await expectViolation(client, Buffer.from(JSON.stringify(HELLO)), /binary messages are not used/, 1003);
  });

  it('a message over the size limit closes 1009', async () => {
    const { client } = await RawWamp.join(url);
    client.send([16, 1, {}, 'com.example.big', ['x'.repeat(1024 * 1024)]]);
    assert.equal((await client.closed).code, 1009);
  });
});

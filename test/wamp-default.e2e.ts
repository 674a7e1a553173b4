import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { connectWampy, deferred, within } from './support/wamp-clients.js';
import { nextMessage, opened, refusedStatus } from './support/ws-helpers.js';

describe('the default broker serves WAMP on /ws next to chat.v1 on /chat', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startDefaultBroker();
  });

  after(() => broker.close());

  it('realm1 takes anonymous sessions, and chat rooms are WAMP topics', async () => {
    const wampy = await connectWampy(`${broker.url}/ws`);
    const event = deferred<unknown>();
    await wampy.subscribe('chat.lobby', (e: { argsList?: unknown[] }) => event.resolve(e.argsList?.[0]));
    const chat = new WebSocket(`${broker.url}/chat`, 'chat.v1');
    const welcome = nextMessage(chat);
    await opened(chat);
    await welcome;
    const joined = nextMessage(chat);
    chat.send(JSON.stringify({ type: 'join', room: 'lobby' }));
    await joined;
    chat.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'hello' }));
    assert.equal(
      ((await within('the chat message at WAMP', event.promise)) as { text: string }).text,
      'hello',
    );
    chat.close();
    await within('wampy to disconnect', wampy.disconnect());
  });

  it('a client that offers no WAMP subprotocol on /ws gets 400', async () => {
    assert.equal(await refusedStatus(new WebSocket(`${broker.url}/ws`)), 400);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, nextMessage, opened, refusedStatus } from './support/ws-helpers.js';

describe('example chat.v1 module with first-message authentication', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker({
      endpoints: [
        {
          path: '/chat',
          subprotocols: ['chat.v1'],
          defaultModule: 'chat.v1',
          origins: ['https://chat.example.com'],
          auth: { mode: 'required', carriers: ['first-message'] },
        },
        { path: '/guests', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
      ],
    });
  });
  after(() => broker.close());

  async function join(user: string, room: string): Promise<WebSocket> {
    const ws = new WebSocket(`${broker.url}/chat`, 'chat.v1', { origin: 'https://chat.example.com' });
    await opened(ws);
    const welcome = nextMessage(ws);
    ws.send(JSON.stringify({ type: 'auth', token: await signToken({ sub: user }) }));
    assert.deepEqual(JSON.parse(await welcome), { type: 'welcome', user });
    ws.send(JSON.stringify({ type: 'join', room }));
    assert.deepEqual(JSON.parse(await nextMessage(ws)), { type: 'joined', room });
    return ws;
  }

  it('two users in a room hear each other through the bus', async () => {
    const alice = await join('alice', 'lobby');
    const bob = await join('bob', 'lobby');
    const heard = nextMessage(bob);
    alice.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'hello bob' }));
    assert.deepEqual(JSON.parse(await heard), {
      type: 'message',
      room: 'lobby',
      user: 'alice',
      text: 'hello bob',
    });
    alice.close();
    bob.close();
  });

  it('guests without a credential get names of their own', async () => {
    const guests = await Promise.all(
      [1, 2, 3].map(async () => {
        const ws = new WebSocket(`${broker.url}/guests`, 'chat.v1');
        const welcome = nextMessage(ws);
        await opened(ws);
        return { ws, user: (JSON.parse(await welcome) as { user: string }).user };
      }),
    );
    for (const { user } of guests) assert.match(user, /^guest-/);
    assert.equal(new Set(guests.map((g) => g.user)).size, 3, guests.map((g) => g.user).join(', '));
    for (const { ws } of guests) ws.close();
  });

  it('bad commands get an error message and the connection stays usable', async () => {
    const carol = await join('carol', 'room-1');
    for (const [bad, reason] of [
      ['not json', /JSON/],
      ['{"type":"dance","room":"room-1"}', /type must be/],
      ['{"type":"join","room":"bad room!"}', /room must be/],
      ['{"type":"say","room":"room-1","text":""}', /text must be/],
      ['{"type":"say","room":"elsewhere","text":"hi"}', /join elsewhere first/],
    ] as const) {
      carol.send(bad);
      const answer = JSON.parse(await nextMessage(carol)) as { type: string; reason: string };
      assert.equal(answer.type, 'error');
      assert.match(answer.reason, reason);
    }
    carol.send(JSON.stringify({ type: 'leave', room: 'room-1' }));
    assert.deepEqual(JSON.parse(await nextMessage(carol)), { type: 'left', room: 'room-1' });
    carol.close();
  });

  it('binary frames are refused with 1003', async () => {
    const dave = await join('dave', 'lobby');
    dave.send(Buffer.from('{"type":"say"}'));
    assert.equal((await closed(dave)).code, 1003);
  });

  it('a page from another origin is refused with 403', async () => {
    const ws = new WebSocket(`${broker.url}/chat`, 'chat.v1', { origin: 'https://evil.example.com' });
    assert.equal(await refusedStatus(ws), 403);
  });

  it('nothing reaches the module before authentication, and a bad token closes 4401', async () => {
    const ws = new WebSocket(`${broker.url}/chat`, 'chat.v1', { origin: 'https://chat.example.com' });
    await opened(ws);
    const received: string[] = [];
    ws.on('message', (data: Buffer) => received.push(data.toString()));
    ws.send(JSON.stringify({ type: 'join', room: 'lobby' }));
    ws.send(JSON.stringify({ type: 'auth', token: await signToken({ secret: 'x'.repeat(40) }) }));
    assert.equal((await closed(ws)).code, 4401);
    assert.deepEqual(received, [], 'no welcome, no joined: the module never saw the connection');
  });
});

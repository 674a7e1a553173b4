import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Inject, Module } from '@nestjs/common';
import { type Wampy } from 'wampy';
import WebSocket from 'ws';
import { type BusMessage, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { WampModule } from '#broker/protocols/wamp';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { connectWampy, deferred, within } from './support/wamp-clients.js';
import { nextMessage, opened } from './support/ws-helpers.js';

let bus: TopicBus | null = null;

/** Hands the test the broker's own bus, as any Nest module would get it. */
class BusProbe {
  constructor(@Inject(TOPIC_BUS) injected: TopicBus) {
    bus = injected;
  }
}

@Module({ providers: [BusProbe] })
class BusProbeModule {}

interface WampyEvent {
  argsList?: unknown[];
  details: Record<string, unknown>;
}

describe('wamp.2.json <-> bus bridge (realm1: a.b.c <-> a/b/c)', () => {
  let broker: TestBroker;
  let wampy: Wampy;

  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [
          { path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' },
          { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
        ],
      },
      [WampModule, BusProbeModule],
    );
    wampy = await connectWampy(`${broker.url}/ws`);
  });

  after(async () => {
    await within('wampy to disconnect', wampy.disconnect());
    await broker.close();
  });

  function theBus(): TopicBus {
    if (bus === null) throw new Error('the bus probe was not created');
    return bus;
  }

  async function chatClient(room: string): Promise<WebSocket> {
    const ws = new WebSocket(`${broker.url}/chat`, 'chat.v1');
    // chat.v1 says welcome right after the 101: listen before the open is awaited.
    const welcome = nextMessage(ws);
    await opened(ws);
    await welcome;
    const joined = nextMessage(ws);
    ws.send(JSON.stringify({ type: 'join', room }));
    assert.equal((JSON.parse(await joined) as { type: string }).type, 'joined');
    return ws;
  }

  it('a chat.v1 message (bus chat/lobby) reaches a WAMP subscriber of chat.lobby', async () => {
    const event = deferred<WampyEvent>();
    await wampy.subscribe('chat.lobby', (e: WampyEvent) => event.resolve(e));
    const chat = await chatClient('lobby');
    chat.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'hello wamp' }));
    const received = await within('the chat message at WAMP', event.promise);
    assert.deepEqual(received.argsList?.[0], {
      type: 'message',
      room: 'lobby',
      user: (received.argsList?.[0] as { user: string }).user,
      text: 'hello wamp',
    });
    chat.close();
  });

  it('a WAMP publication reaches the chat room and a bus subscriber', async () => {
    const chat = await chatClient('garden');
    const atChat = nextMessage(chat);
    const atBus = deferred<BusMessage>();
    const subscription = theBus().subscribe('chat/+', (message) => atBus.resolve(message));
    const message = { type: 'message', room: 'garden', user: 'wamp', text: 'hi from WAMP' };
    await wampy.publish('chat.garden', [message]);
    // Another module's message, wrapped for the chat client: its payload (the JSON) as the text.
    const heard = JSON.parse(await atChat) as Record<string, unknown>;
    assert.deepEqual(
      { ...heard, text: JSON.parse(String(heard['text'])) },
      {
        type: 'message',
        room: 'garden',
        user: null,
        text: message,
        origin: 'wamp.2.json',
      },
    );
    const onBus = await within('the bus message', atBus.promise);
    assert.equal(onBus.topic, 'chat/garden');
    assert.equal(onBus.origin, 'wamp.2.json');
    assert.equal(onBus.contentType, 'application/json');
    assert.equal(onBus.principal, null);
    subscription.unsubscribe();
    chat.close();
  });

  it('bus payloads: JSON parsed, text as a string; levels that are no URI component stay on the bus', async () => {
    const events: WampyEvent[] = [];
    const last = deferred<true>();
    await wampy.subscribe(
      'sensors',
      (e: WampyEvent) => {
        events.push(e);
        if (e.details['topic'] === 'sensors.end') last.resolve(true);
      },
      { match: 'prefix' },
    );
    const publish = (topic: string, text: string, contentType?: string): void => {
      theBus().publish({
        topic,
        payload: Buffer.from(text),
        origin: 'test',
        ...(contentType && { contentType }),
      });
    };
    publish('sensors/hall/temp', '{"celsius":20}', 'application/json');
    publish('sensors//temp', 'empty level');
    publish('sensors/hall.1/temp', 'dot in a level');
    publish('sensors/hall 1/temp', 'space in a level');
    publish('sensors/kitchen/temp', '21.5');
    publish('sensors/end', '');
    await within('the last bus message', last.promise);
    assert.deepEqual(
      events.map((e) => [e.details['topic'], e.argsList]),
      [
        ['sensors.hall.temp', [{ celsius: 20 }]],
        ['sensors.kitchen.temp', ['21.5']],
        ['sensors.end', undefined],
      ],
    );
  });

  it('the bridge skips its own publications coming back from the bus: one event, not two', async () => {
    const events: unknown[] = [];
    const done = deferred<true>();
    await wampy.subscribe('echo.check', (e: WampyEvent) => {
      events.push(e.argsList?.[0]);
      if (e.argsList?.[0] === 'end') done.resolve(true);
    });
    // wampy 8 drops `exclude_me: false`, so another session publishes.
    const publisher = await connectWampy(`${broker.url}/ws`);
    await publisher.publish('echo.check', 'once');
    await publisher.publish('echo.check', 'end');
    await within('the end marker', done.promise);
    assert.deepEqual(events, ['once', 'end']);
    await within('the publisher to disconnect', publisher.disconnect());
  });
});

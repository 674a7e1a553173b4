import { Wampy } from 'wampy';
import WebSocket from 'ws';
import { REALM } from './wamp-session.js';

const CHECK_TIMEOUT_MS = 10_000;

type WampyOptions = NonNullable<ConstructorParameters<typeof Wampy>[1]>;

/**
 * Before any timing, a real client (wampy) must get a session, an RPC answer and an event from the
 * router: the load clients speak WAMP by hand, and a router that only accepted them would prove little.
 */
export async function expectWampyWorks(name: string, port: number): Promise<void> {
  const url = `ws://127.0.0.1:${port}/ws`;
  // wampy's WebSocket constructor type is the browser's; ws's class is what it calls on Node.
  const options: WampyOptions = {
    realm: REALM,
    autoReconnect: false,
    ws: WebSocket as unknown as WampyOptions['ws'],
  };
  const callee = new Wampy(url, options);
  const caller = new Wampy(url, options);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([timeout, roundTrip(callee, caller)]);
  } catch (err) {
    throw new Error(`${name}: the wampy check failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    await Promise.allSettled([callee.disconnect(), caller.disconnect()]);
  }
}

async function roundTrip(callee: Wampy, caller: Wampy): Promise<void> {
  await Promise.all([callee.connect(), caller.connect()]);
  await callee.register('bench.check.echo', ({ argsList }) => ({ argsList }));
  let received: (args: unknown) => void = () => undefined;
  const event = new Promise<unknown>((resolve) => (received = resolve));
  // Resolves on SUBSCRIBED, so the publication below must reach it.
  await callee.subscribe('bench.check.topic', ({ argsList }) => received(argsList));
  const result = await caller.call('bench.check.echo', [1, 'two']);
  if (JSON.stringify(result.argsList) !== '[1,"two"]') {
    throw new Error(`call answered ${JSON.stringify(result.argsList)}`);
  }
  await caller.publish('bench.check.topic', ['hello'], { acknowledge: true });
  const args = await event;
  if (JSON.stringify(args) !== '["hello"]') throw new Error(`event carried ${JSON.stringify(args)}`);
}

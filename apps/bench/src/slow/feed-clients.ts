import WebSocket from 'ws';
import { openClient } from '../load/ws-client.js';
import { type Feed } from './feeds.js';

const TIMEOUT_MS = 10_000;

/** A subscriber of the feed, subscribed. */
export async function subscriber(port: number, feed: Feed, role: string): Promise<WebSocket> {
  const ws = await session(port, feed, feed.subscribe(`slow-${role}`));
  if (feed.subscribeLast !== undefined) ws.send(feed.subscribeLast);
  return ws;
}

/** Opens the feed's endpoint and sends `steps`, each answered by one message before the next. */
export async function session(
  port: number,
  feed: Feed,
  steps: readonly (string | Buffer)[],
): Promise<WebSocket> {
  const ws = await openClient({ port, path: feed.path, subprotocol: feed.subprotocol }, TIMEOUT_MS);
  for (const step of steps) {
    const answered = new Promise((resolve) => ws.once('message', resolve));
    ws.send(step);
    await answered;
  }
  return ws;
}

/** Publishes probes until `heard` counts one: until then a subscription may still be starting. */
/** Probes are numbered from here, past any run's own events, so a late probe is told apart. */
export const PROBE_SEQ = 1e12;

export async function untilHeard(publisher: WebSocket, feed: Feed, heard: () => number): Promise<void> {
  for (let probe = 0; heard() === 0; probe++) {
    if (probe > 100) throw new Error(`${feed.name}: no subscriber heard a probe`);
    publisher.send(feed.publish(PROBE_SEQ + probe, 'probe'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

import type WebSocket from 'ws';
import { type FanoutClients } from '../load/fanout-load.js';
import { eventText } from '../load/event-payload.js';
import { MessageInbox, openClient, type ClientTarget } from '../load/ws-client.js';
import {
  connectionInit,
  FANOUT_SUBSCRIPTION,
  FANOUT_TOPIC,
  PUBLISH_MUTATION,
  readDelivery,
  readPublishResult,
  readServerMessage,
  subscribeMessage,
} from './transport-ws-load.js';

const SUBSCRIPTION_ID = 'fanout';

/**
 * graphql-transport-ws subscribers and a publisher (the `publish` mutation) for one server.
 * `expectedReach` is the count every measured `publish` must return: the subscribers, plus any bus
 * subscription of the server's own.
 */
export function graphqlFanoutClients(port: number, expectedReach: number, timeoutMs: number): FanoutClients {
  const target: ClientTarget = { port, path: '/graphql', subprotocol: 'graphql-transport-ws' };
  return {
    openSubscriber: async (sink) => {
      const { ws, inbox } = await acknowledged(target, timeoutMs);
      ws.send(subscribeMessage(SUBSCRIPTION_ID, FANOUT_SUBSCRIPTION));
      inbox.forEach(
        (text) => {
          const delivery = readDelivery(text, SUBSCRIPTION_ID);
          if (typeof delivery === 'string') sink.fail(delivery);
          else sink.deliver(delivery.seq, delivery.sentAtMs);
        },
        (why) => sink.fail(`subscriber ${why}`),
      );
      return ws;
    },
    openPublisher: async (fail) => {
      const { ws, inbox } = await acknowledged(target, timeoutMs);
      inbox.forEach(
        (text) => {
          const message = readServerMessage(text);
          if (typeof message === 'string') return fail(message);
          if (message.type === 'ping') return ws.send(JSON.stringify({ type: 'pong' }));
          if (message.type === 'error') return fail('mutation refused');
          if (message.type !== 'next') return;
          const reached = readPublishResult(message.payload);
          if (typeof reached === 'string') return fail(reached);
          // Probes (seq 0) go out while subscriptions are still starting: they may reach fewer.
          if (!message.id?.startsWith('p0-') && reached !== expectedReach) {
            fail(`an event reached ${reached} bus subscribers, not ${expectedReach}`);
          }
        },
        (why) => fail(why),
      );
      // Each mutation gets its own operation id, probes too (they all carry seq 0): an id still
      // running when it is sent again is answered 4409 by a slow server.
      let sent = 0;
      return {
        socket: ws,
        publish: (seq, sentAtMs) =>
          ws.send(
            subscribeMessage(`p${seq}-${sent++}`, PUBLISH_MUTATION, {
              topic: FANOUT_TOPIC,
              payload: eventText(seq, sentAtMs),
            }),
          ),
      };
    },
  };
}

/** A connection past connection_init/connection_ack. */
async function acknowledged(
  target: ClientTarget,
  timeoutMs: number,
): Promise<{ ws: WebSocket; inbox: MessageInbox }> {
  const ws = await openClient(target, timeoutMs);
  const inbox = new MessageInbox(ws);
  ws.send(connectionInit());
  const ack = readServerMessage(await inbox.next(timeoutMs, 'connection_ack'));
  if (typeof ack === 'string' || ack.type !== 'connection_ack') {
    ws.terminate();
    throw new Error(`connection_init answered with ${typeof ack === 'string' ? ack : ack.type}`);
  }
  return { ws, inbox };
}

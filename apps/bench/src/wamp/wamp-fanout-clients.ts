import { type FanoutClients } from '../load/fanout-load.js';
import {
  ARGS_INDEX,
  expectType,
  publish,
  readMessage,
  readStamp,
  subscribe,
  WAMP,
} from './wamp-load-messages.js';
import { openSession } from './wamp-session.js';

const TOPIC = 'bench.fanout';

/** Raw WAMP subscribers (SUBSCRIBED before they count as open) and a publisher without acknowledgements. */
export function wampFanoutClients(port: number, timeoutMs: number): FanoutClients {
  return {
    openSubscriber: async (sink) => {
      const session = await openSession(port, 'subscriber', timeoutMs);
      await session.request(subscribe(1, TOPIC), WAMP.SUBSCRIBED, 'SUBSCRIBED');
      session.inbox.forEach(
        (text) => {
          const event = expectType(readMessage(text), WAMP.EVENT);
          const stamp = typeof event === 'string' ? event : readStamp(event, ARGS_INDEX[WAMP.EVENT]);
          if (typeof stamp === 'string') sink.fail(`subscriber: ${stamp}`);
          else sink.deliver(stamp.seq, stamp.sentAtMs);
        },
        (why) => sink.fail(`subscriber ${why}`),
      );
      return session.ws;
    },
    openPublisher: async (fail) => {
      const session = await openSession(port, 'publisher', timeoutMs);
      // Nothing is owed to a publisher that asks for no acknowledgement: anything it gets is an error.
      session.inbox.forEach(
        (text) => {
          const message = readMessage(text);
          fail(typeof message === 'string' ? message : `unexpected WAMP message type ${String(message[0])}`);
        },
        (why) => fail(why),
      );
      let requestId = 0;
      return {
        socket: session.ws,
        publish: (seq, sentAtMs) => session.ws.send(publish(++requestId, TOPIC, [seq, sentAtMs])),
      };
    },
  };
}

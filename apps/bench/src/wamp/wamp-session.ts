import type WebSocket from 'ws';
import { type WriteBatcher } from '../load/write-batcher.js';
import { MessageInbox, openClient } from '../load/ws-client.js';
import { expectType, hello, readMessage, WAMP, type Role } from './wamp-load-messages.js';

export const REALM = 'realm1';

export interface WampSession {
  readonly ws: WebSocket;
  readonly inbox: MessageInbox;
  /** Sends `text` and resolves with the answer, which must be of `type`. */
  request(text: string, type: number, what: string): Promise<readonly unknown[]>;
}

/** A raw WAMP session on realm1, past HELLO/WELCOME, announcing the one role it plays. */
export async function openSession(
  port: number,
  role: Role,
  timeoutMs: number,
  batcher?: WriteBatcher,
): Promise<WampSession> {
  const ws = await openClient({ port, path: '/ws', subprotocol: 'wamp.2.json', batcher }, timeoutMs);
  const inbox = new MessageInbox(ws);
  const request = async (text: string, type: number, what: string): Promise<readonly unknown[]> => {
    ws.send(text);
    const answer = expectType(readMessage(await inbox.next(timeoutMs, what)), type);
    if (typeof answer !== 'string') return answer;
    ws.terminate();
    throw new Error(`${what}: got ${answer}`);
  };
  await request(hello(REALM, role), WAMP.WELCOME, 'WELCOME');
  return { ws, inbox, request };
}

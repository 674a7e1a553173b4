import { type Msg, type NatsConnection, RequestError, TimeoutError } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { NodeTimeoutError, NoHolderError, RemoteError } from './cluster-errors.js';

/**
 * The request/answer plumbing under ClusterNode: a request's body and its reply travel as JSON, and a
 * handler's failure comes back to the asking node as a RemoteError carrying the error's name.
 */

export type RequestHandler = (body: unknown) => unknown;

type Reply = { ok: true; value: unknown } | { ok: false; code: string; message: string };

const utf8 = new TextDecoder();

export function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(data)) as unknown;
  } catch {
    return undefined;
  }
}

/** A handler of this node's, its failure shaped as a remote one's. */
export async function runLocal<T>(handler: RequestHandler, body: unknown): Promise<T> {
  try {
    return (await handler(body)) as T;
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    throw new RemoteError(error.name, error.message);
  }
}

export async function answer(
  nc: NatsConnection,
  logger: Logger,
  msg: Msg,
  handler: RequestHandler,
): Promise<void> {
  let reply: Reply;
  const body = parseJson(msg.data);
  if (body === undefined) {
    logger.warn({ subject: msg.subject }, 'cluster request that is not JSON dropped');
    reply = { ok: false, code: 'BadRequest', message: 'the request is not JSON' };
  } else {
    try {
      reply = { ok: true, value: await handler(body) };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, code: error.name, message: error.message };
    }
  }
  if (msg.reply === undefined || msg.reply === '' || nc.isClosed()) return;
  try {
    msg.respond(JSON.stringify(reply));
  } catch (err) {
    logger.warn({ err: (err as Error).message, subject: msg.subject }, 'cluster reply not sent');
  }
}

export async function ask<T>(
  nc: NatsConnection,
  subject: string,
  body: unknown,
  timeoutMs: number,
): Promise<T> {
  let msg: Msg;
  try {
    msg = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
  } catch (err) {
    if (err instanceof RequestError && err.isNoResponders())
      throw new NoHolderError(`nobody serves ${subject}`);
    if (err instanceof TimeoutError || (err as Error).cause instanceof TimeoutError) {
      throw new NodeTimeoutError(`no answer from ${subject} in time`);
    }
    throw err;
  }
  const reply = parseJson(msg.data) as Reply | undefined;
  if (reply === undefined || typeof reply !== 'object' || reply === null || typeof reply.ok !== 'boolean') {
    throw new RemoteError('BadReply', `the answer from ${subject} is not a reply`);
  }
  if (!reply.ok) throw new RemoteError(String(reply.code), String(reply.message));
  return reply.value as T;
}

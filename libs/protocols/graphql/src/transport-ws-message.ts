import { MessageType, validateMessage } from 'graphql-ws';
import { nestsDeeperThan, type ParseResult, TOO_DEEP } from '#broker/kit';

/** Messages only a server sends: a client sending one is speaking the protocol wrong. */
const SERVER_ONLY: ReadonlySet<string> = new Set([
  MessageType.ConnectionAck,
  MessageType.Next,
  MessageType.Error,
]);

/** A client message's type and id, or why it is invalid. */
export type TransportWsRead = ParseResult<{ readonly type: string; readonly id: string | undefined }>;

/**
 * Reads a graphql-transport-ws client message: its type and id, or why it is invalid. graphql-ws's own
 * server closes 4400 with a fixed "Invalid message received" (or 4500 for a server-only type); this
 * check runs first so the close reason says what was wrong.
 */
export function readTransportWsMessage(text: string): TransportWsRead {
  if (nestsDeeperThan(text)) return { ok: false, problem: `Invalid message: ${TOO_DEEP}` };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'Invalid message: not JSON' };
  }
  try {
    validateMessage(message);
  } catch (err) {
    return { ok: false, problem: `Invalid message: ${(err as Error).message}` };
  }
  const { type, id } = message as { type: string; id?: string };
  if (SERVER_ONLY.has(type)) {
    return { ok: false, problem: `Invalid message: "${type}" is sent by servers, not clients` };
  }
  return { ok: true, message: { type, id } };
}

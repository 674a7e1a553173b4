import { MessageType, validateMessage } from 'graphql-ws';

/** Messages only a server sends: a client sending one is speaking the protocol wrong. */
const SERVER_ONLY: ReadonlySet<string> = new Set([
  MessageType.ConnectionAck,
  MessageType.Next,
  MessageType.Error,
]);

/**
 * Why a graphql-transport-ws client message is invalid, or null when it is fine. graphql-ws's own
 * server closes 4400 with a fixed "Invalid message received" (or 4500 for a server-only type); this
 * check runs first so the close reason says what was wrong.
 */
export function transportWsMessageProblem(text: string): string | null {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'Invalid message: not JSON';
  }
  try {
    validateMessage(message);
  } catch (err) {
    return `Invalid message: ${(err as Error).message}`;
  }
  const type = (message as { type: string }).type;
  if (SERVER_ONLY.has(type)) return `Invalid message: "${type}" is sent by servers, not clients`;
  return null;
}

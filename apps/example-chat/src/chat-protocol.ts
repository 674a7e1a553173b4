/** chat.v1: JSON text messages. Parsing is pure so the rules are testable without a socket. */
export type ChatCommand =
  | { readonly type: 'join'; readonly room: string }
  | { readonly type: 'leave'; readonly room: string }
  | { readonly type: 'say'; readonly room: string; readonly text: string };

export const MAX_TEXT_LENGTH = 4096;
const ROOM = /^[A-Za-z0-9_-]{1,64}$/;

export function parseChatCommand(data: string): ChatCommand | { readonly error: string } {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return { error: 'messages must be JSON' };
  }
  if (typeof message !== 'object' || message === null) return { error: 'messages must be JSON objects' };
  const { type, room, text } = message as Record<string, unknown>;
  if (type !== 'join' && type !== 'leave' && type !== 'say') {
    return { error: 'type must be one of join, leave, say' };
  }
  if (typeof room !== 'string' || !ROOM.test(room)) {
    return { error: 'room must be 1-64 characters of A-Z, a-z, 0-9, _ or -' };
  }
  if (type !== 'say') return { type, room };
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TEXT_LENGTH) {
    return { error: `text must be a string of 1-${MAX_TEXT_LENGTH} characters` };
  }
  return { type, room, text };
}

/** The protocol's name, which its own messages carry on the bus as their origin. */
export const CHAT_ORIGIN = 'chat.v1';

/**
 * What a chat client receives for a bus message in `room`: a chat message as it was said, and any other
 * module's (an MQTT publish, a GraphQL mutation) as a `message` too, its payload as `text` (UTF-8), with
 * the publisher's subject as `user` (null when anonymous) and the module as `origin`.
 */
export function chatEventOf(
  room: string,
  message: { readonly payload: Uint8Array; readonly origin: string; readonly principal?: string | null },
): string {
  const text = Buffer.from(message.payload).toString('utf8');
  if (message.origin === CHAT_ORIGIN) return text;
  return JSON.stringify({
    type: 'message',
    room,
    user: message.principal ?? null,
    text,
    origin: message.origin,
  });
}

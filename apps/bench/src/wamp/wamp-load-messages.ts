/**
 * The WAMP v2 JSON messages of the load clients, built and read by hand (wamp-proto basic profile):
 * a WAMP client library would cost the load generator more than the messages themselves.
 */

export const WAMP = {
  HELLO: 1,
  WELCOME: 2,
  ABORT: 3,
  ERROR: 8,
  PUBLISH: 16,
  SUBSCRIBE: 32,
  SUBSCRIBED: 33,
  EVENT: 36,
  CALL: 48,
  RESULT: 50,
  REGISTER: 64,
  REGISTERED: 65,
  INVOCATION: 68,
  YIELD: 70,
} as const;

export type Role = 'publisher' | 'subscriber' | 'caller' | 'callee';

export function hello(realm: string, role: Role): string {
  return JSON.stringify([WAMP.HELLO, realm, { roles: { [role]: {} } }]);
}

export function subscribe(requestId: number, topic: string): string {
  return JSON.stringify([WAMP.SUBSCRIBE, requestId, {}, topic]);
}

/** A publication without acknowledgement, as a fire-and-forget publisher sends it. */
export function publish(requestId: number, topic: string, args: readonly unknown[]): string {
  return JSON.stringify([WAMP.PUBLISH, requestId, {}, topic, args]);
}

export function register(requestId: number, procedure: string): string {
  return JSON.stringify([WAMP.REGISTER, requestId, {}, procedure]);
}

export function call(requestId: number, procedure: string, args: readonly unknown[]): string {
  return JSON.stringify([WAMP.CALL, requestId, {}, procedure, args]);
}

export function yieldResult(invocationId: number, args: readonly unknown[]): string {
  return JSON.stringify([WAMP.YIELD, invocationId, {}, args]);
}

/** A WAMP message (a JSON array starting with an integer type), or a label saying why not. */
export function readMessage(text: string): readonly unknown[] | string {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'WAMP message is not JSON';
  }
  if (!Array.isArray(message) || !Number.isInteger(message[0])) return 'not a WAMP message';
  return message;
}

/** A message of `type`, or a label: an ABORT or ERROR says its URI, which is what one wants to read. */
export function expectType(message: readonly unknown[] | string, type: number): readonly unknown[] | string {
  if (typeof message === 'string') return message;
  if (message[0] === type) return message;
  if (message[0] === WAMP.ABORT) return `ABORT ${String(message[2])}`;
  if (message[0] === WAMP.ERROR) return `ERROR ${String(message[4])}`;
  return `WAMP message type ${String(message[0])} where ${type} was expected`;
}

export interface Stamp {
  readonly seq: number;
  readonly sentAtMs: number;
}

/** The `[seq, sentAtMs]` arguments of an EVENT (or RESULT, or INVOCATION), or a label. */
export function readStamp(message: readonly unknown[], argsIndex: number): Stamp | string {
  const args = message[argsIndex];
  if (!Array.isArray(args) || args.length !== 2)
    return `type ${String(message[0])} without [seq, sentAt] arguments`;
  const [seq, sentAtMs] = args as unknown[];
  if (typeof seq !== 'number' || typeof sentAtMs !== 'number')
    return `type ${String(message[0])} with non-numeric arguments`;
  return { seq, sentAtMs };
}

/** Where each message type keeps its positional arguments. */
export const ARGS_INDEX = { [WAMP.EVENT]: 4, [WAMP.RESULT]: 3, [WAMP.INVOCATION]: 4 } as const;

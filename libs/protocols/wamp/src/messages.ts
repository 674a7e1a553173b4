import { nestsDeeperThan, type ParseResult, TOO_DEEP } from '#broker/kit';
import { isId } from './ids.js';

/** Message type codes (WAMP basic and advanced profile). */
export const HELLO = 1;
export const WELCOME = 2;
export const ABORT = 3;
export const CHALLENGE = 4;
export const AUTHENTICATE = 5;
export const GOODBYE = 6;
export const ERROR = 8;
export const PUBLISH = 16;
export const PUBLISHED = 17;
export const SUBSCRIBE = 32;
export const SUBSCRIBED = 33;
export const UNSUBSCRIBE = 34;
export const UNSUBSCRIBED = 35;
export const EVENT = 36;
export const CALL = 48;
export const CANCEL = 49;
export const RESULT = 50;
export const REGISTER = 64;
export const REGISTERED = 65;
export const UNREGISTER = 66;
export const UNREGISTERED = 67;
export const INVOCATION = 68;
export const INTERRUPT = 69;
export const YIELD = 70;

export type Dict = Record<string, unknown>;
export type Args = unknown[] | undefined;
export type Kwargs = Dict | undefined;

/** What a client may send to a router, after shape validation. URIs are checked later, per realm rule. */
export type ClientMessage =
  | { type: typeof HELLO; realm: unknown; details: Dict }
  | { type: typeof AUTHENTICATE; signature: string; extra: Dict }
  | { type: typeof ABORT; details: Dict; reason: unknown }
  | { type: typeof GOODBYE; details: Dict; reason: unknown }
  | {
      type: typeof ERROR;
      requestType: number;
      request: number;
      details: Dict;
      error: unknown;
      args: Args;
      kwargs: Kwargs;
    }
  | { type: typeof PUBLISH; request: number; options: Dict; uri: unknown; args: Args; kwargs: Kwargs }
  | { type: typeof SUBSCRIBE; request: number; options: Dict; uri: unknown }
  | { type: typeof UNSUBSCRIBE; request: number; id: number }
  | { type: typeof CALL; request: number; options: Dict; uri: unknown; args: Args; kwargs: Kwargs }
  | { type: typeof CANCEL; request: number; options: Dict }
  | { type: typeof REGISTER; request: number; options: Dict; uri: unknown }
  | { type: typeof UNREGISTER; request: number; id: number }
  | { type: typeof YIELD; request: number; options: Dict; args: Args; kwargs: Kwargs };

export type Decoded = ParseResult<ClientMessage>;

const NAMES: Record<number, string> = {
  [HELLO]: 'HELLO',
  [AUTHENTICATE]: 'AUTHENTICATE',
  [ABORT]: 'ABORT',
  [GOODBYE]: 'GOODBYE',
  [ERROR]: 'ERROR',
  [PUBLISH]: 'PUBLISH',
  [SUBSCRIBE]: 'SUBSCRIBE',
  [UNSUBSCRIBE]: 'UNSUBSCRIBE',
  [CALL]: 'CALL',
  [CANCEL]: 'CANCEL',
  [REGISTER]: 'REGISTER',
  [UNREGISTER]: 'UNREGISTER',
  [YIELD]: 'YIELD',
};

export function messageName(type: number): string {
  return NAMES[type] ?? String(type);
}

function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses one text frame into a client message. Reasons never quote the message: an AUTHENTICATE carries a
 * secret, and hostile input does not belong in logs.
 */
export function decode(text: string): Decoded {
  if (nestsDeeperThan(text)) return { ok: false, problem: TOO_DEEP };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the message is not valid JSON' };
  }
  if (!Array.isArray(value) || value.length === 0)
    return { ok: false, problem: 'a message must be a non-empty JSON array' };
  const m: unknown[] = value;
  const type = m[0];
  if (typeof type !== 'number' || !Object.hasOwn(NAMES, type)) {
    return {
      ok: false,
      problem: `unknown or unexpected message type ${JSON.stringify(type)?.slice(0, 20) ?? 'undefined'}`,
    };
  }
  const problem = (what: string): Decoded => ({
    ok: false,
    problem: `malformed ${messageName(type)}: ${what}`,
  });
  const length = (min: number, max: number): boolean => m.length >= min && m.length <= max;
  const payload = (at: number): { args: Args; kwargs: Kwargs } | null => {
    const args = m[at];
    const kwargs = m[at + 1];
    if (args !== undefined && !Array.isArray(args)) return null;
    if (kwargs !== undefined && !isDict(kwargs)) return null;
    return { args, kwargs };
  };
  switch (type) {
    case HELLO:
      if (!length(3, 3) || !isDict(m[2])) return problem('expected [1, Realm, Details]');
      return { ok: true, message: { type, realm: m[1], details: m[2] } };
    case AUTHENTICATE:
      if (!length(3, 3) || typeof m[1] !== 'string' || !isDict(m[2])) {
        return problem('expected [5, Signature|string, Extra|dict]');
      }
      return { ok: true, message: { type, signature: m[1], extra: m[2] } };
    case ABORT:
    case GOODBYE:
      if (!length(3, 3) || !isDict(m[1])) return problem(`expected [${type}, Details|dict, Reason|uri]`);
      return { ok: true, message: { type, details: m[1], reason: m[2] } };
    case ERROR: {
      const p = payload(5);
      if (!length(5, 7) || typeof m[1] !== 'number' || !isId(m[2]) || !isDict(m[3]) || p === null) {
        return problem(
          'expected [8, Type|int, Request|id, Details|dict, Error|uri, Arguments|list, ArgumentsKw|dict]',
        );
      }
      return {
        ok: true,
        message: { type, requestType: m[1], request: m[2], details: m[3], error: m[4], ...p },
      };
    }
    case PUBLISH:
    case CALL: {
      const p = payload(4);
      if (!length(4, 6) || !isId(m[1]) || !isDict(m[2]) || p === null) {
        return problem(`expected [${type}, Request|id, Options|dict, URI, Arguments|list, ArgumentsKw|dict]`);
      }
      return { ok: true, message: { type, request: m[1], options: m[2], uri: m[3], ...p } };
    }
    case SUBSCRIBE:
    case REGISTER:
      if (!length(4, 4) || !isId(m[1]) || !isDict(m[2])) {
        return problem(`expected [${type}, Request|id, Options|dict, URI]`);
      }
      return { ok: true, message: { type, request: m[1], options: m[2], uri: m[3] } };
    case UNSUBSCRIBE:
    case UNREGISTER:
      if (!length(3, 3) || !isId(m[1]) || !isId(m[2]))
        return problem(`expected [${type}, Request|id, Id|id]`);
      return { ok: true, message: { type, request: m[1], id: m[2] } };
    case CANCEL:
      if (!length(3, 3) || !isId(m[1]) || !isDict(m[2]))
        return problem('expected [49, Request|id, Options|dict]');
      return { ok: true, message: { type, request: m[1], options: m[2] } };
    case YIELD: {
      const p = payload(3);
      if (!length(3, 5) || !isId(m[1]) || !isDict(m[2]) || p === null) {
        return problem('expected [70, Request|id, Options|dict, Arguments|list, ArgumentsKw|dict]');
      }
      return { ok: true, message: { type, request: m[1], options: m[2], ...p } };
    }
  }
  return { ok: false, problem: `unknown message type ${type}` };
}

/** Appends Arguments and ArgumentsKw the way the spec wants: omitted when empty, `[]` before a lone kwargs. */
export function withPayload(head: unknown[], args: Args, kwargs: Kwargs): unknown[] {
  const hasKwargs = kwargs !== undefined && Object.keys(kwargs).length > 0;
  if (hasKwargs) head.push(args ?? [], kwargs);
  else if (args !== undefined && args.length > 0) head.push(args);
  return head;
}

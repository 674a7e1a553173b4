import { type ParseResult } from '#broker/kit';
import { type ErrorCode } from './errors.js';

export const CALL = 2;
export const CALLRESULT = 3;
export const CALLERROR = 4;

/** OCPP-J 1.6 section 4.1.4: a message id is at most 36 characters. */
export const MAX_MESSAGE_ID_LENGTH = 36;

export type Payload = Record<string, unknown>;

export type Frame =
  | { readonly kind: 'call'; readonly id: string; readonly action: string; readonly payload: unknown }
  | { readonly kind: 'result'; readonly id: string; readonly payload: unknown }
  | {
      readonly kind: 'error';
      readonly id: string;
      readonly code: string;
      readonly description: string;
      readonly details: unknown;
    }
  /** A message type number we do not know: ignored (OCPP-J 1.6 section 4.1.3). */
  | { readonly kind: 'unknown-type'; readonly type: number };

export type InvalidReason = 'invalid-json' | 'not-a-frame' | 'bad-message-id';

/**
 * Why a message is not a usable frame, beside the problem (the CALLERROR's description). `id` is set
 * when one could be recovered, so that a CALLERROR can answer.
 */
export interface InvalidFrame {
  readonly id: string | null;
  readonly code: ErrorCode;
  readonly reason: InvalidReason;
}

/** What parseFrame makes of one text message. */
export type ParsedFrame = ParseResult<Frame, InvalidFrame>;

function invalid(id: string | null, code: ErrorCode, reason: InvalidReason, problem: string): ParsedFrame {
  return { ok: false, id, code, reason, problem };
}

/** The id of a CALL whose JSON does not parse, read off its start: `[2, "id", ...`. */
const CALL_PREFIX = /^\s*\[\s*2\s*,\s*"([^"\\\p{Cc}]{1,36})"/u;

/**
 * Parses one text message into an RPC frame, sans-IO. Only a CALL is ever answered, so `id` is
 * recovered only where the message was (or looks like) a CALL: a broken CALLRESULT or CALLERROR
 * gets no answer (section 4.2.3: errors answer CALLs).
 */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const id = CALL_PREFIX.exec(text)?.[1] ?? null;
    return invalid(id, 'FormationViolation', 'invalid-json', 'The message is not valid JSON.');
  }
  if (!Array.isArray(value) || value.length === 0) {
    return invalid(
      null,
      'ProtocolError',
      'not-a-frame',
      'An OCPP-J message is a JSON array [type, id, ...].',
    );
  }
  const [type, id] = value as unknown[];
  if (typeof type !== 'number') {
    return invalid(null, 'ProtocolError', 'not-a-frame', 'The message type must be a number.');
  }
  if (type !== CALL && type !== CALLRESULT && type !== CALLERROR) {
    return { ok: true, message: { kind: 'unknown-type', type } };
  }
  const answerable = type === CALL && typeof id === 'string' ? id : null;
  if (typeof id !== 'string' || id.length === 0) {
    return invalid(null, 'ProtocolError', 'bad-message-id', 'The message id must be a non-empty string.');
  }
  if (id.length > MAX_MESSAGE_ID_LENGTH) {
    return invalid(
      answerable,
      'ProtocolError',
      'bad-message-id',
      `The message id is ${id.length} characters long; at most ${MAX_MESSAGE_ID_LENGTH} are allowed.`,
    );
  }
  if (type === CALL) {
    const [, , action, payload] = value as unknown[];
    if (value.length !== 4 || typeof action !== 'string' || action.length === 0) {
      return invalid(id, 'ProtocolError', 'not-a-frame', 'A CALL is [2, "<id>", "<action>", {payload}].');
    }
    return { ok: true, message: { kind: 'call', id, action, payload } };
  }
  if (type === CALLRESULT) {
    if (value.length !== 3) {
      return invalid(null, 'ProtocolError', 'not-a-frame', 'A CALLRESULT is [3, "<id>", {payload}].');
    }
    return { ok: true, message: { kind: 'result', id, payload: value[2] } };
  }
  const [, , code, description, details] = value as unknown[];
  if (value.length !== 5 || typeof code !== 'string' || typeof description !== 'string') {
    return invalid(
      null,
      'ProtocolError',
      'not-a-frame',
      'A CALLERROR is [4, "<id>", "<code>", "<description>", {details}].',
    );
  }
  return { ok: true, message: { kind: 'error', id, code, description, details } };
}

export function encodeCall(id: string, action: string, payload: unknown): string {
  return JSON.stringify([CALL, id, action, payload]);
}

export function encodeResult(id: string, payload: unknown): string {
  return JSON.stringify([CALLRESULT, id, payload]);
}

/** Description capped: a CALLERROR must stay small whatever went wrong. */
const MAX_DESCRIPTION = 255;

export function encodeError(
  id: string,
  code: ErrorCode,
  description: string,
  details: Readonly<Record<string, unknown>> = {},
): string {
  return JSON.stringify([CALLERROR, id, code, description.slice(0, MAX_DESCRIPTION), details]);
}

import { nestsDeeperThan, type ParseResult, TOO_DEEP } from '#broker/kit';
import { type OperationRequest } from './graphql-engine.js';

/** The legacy graphql-ws protocol of subscriptions-transport-ws: what a client may send. */
export type LegacyClientMessage =
  | { readonly type: 'connection_init'; readonly payload: unknown }
  | { readonly type: 'start'; readonly id: string; readonly payload: OperationRequest }
  | { readonly type: 'stop'; readonly id: string }
  | { readonly type: 'connection_terminate' };

/** What the server sends. `error` carries a single error object, unlike graphql-transport-ws. */
export type LegacyServerMessage =
  | { readonly type: 'connection_ack'; readonly payload?: Readonly<Record<string, unknown>> }
  | { readonly type: 'connection_error'; readonly payload: { readonly message: string } }
  | { readonly type: 'ka' }
  | { readonly type: 'data'; readonly id: string; readonly payload: Readonly<Record<string, unknown>> }
  | { readonly type: 'error'; readonly id: string; readonly payload: Readonly<Record<string, unknown>> }
  | { readonly type: 'complete'; readonly id: string };

export type ParsedLegacyMessage = ParseResult<
  LegacyClientMessage,
  /** `id` is set when the problem belongs to one operation (a start with a bad payload). */
  { readonly id?: string }
>;

const TYPES = 'connection_init, start, stop, connection_terminate';

/** Pure parsing with a readable reason for every refusal. */
export function parseLegacyMessage(text: string): ParsedLegacyMessage {
  if (nestsDeeperThan(text)) return { ok: false, problem: `Invalid message: ${TOO_DEEP}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'Invalid message: not JSON' };
  }
  if (!isRecord(value)) return { ok: false, problem: 'Invalid message: not a JSON object' };
  const { type, id, payload } = value;
  switch (type) {
    case 'connection_init':
      if (payload !== undefined && payload !== null && !isRecord(payload)) {
        return { ok: false, problem: 'Invalid connection_init: the payload must be an object' };
      }
      return { ok: true, message: { type, payload } };
    case 'connection_terminate':
      return { ok: true, message: { type } };
    case 'stop':
      if (!isId(id)) return { ok: false, problem: 'Invalid stop: the id must be a non-empty string' };
      return { ok: true, message: { type, id } };
    case 'start': {
      if (!isId(id)) return { ok: false, problem: 'Invalid start: the id must be a non-empty string' };
      const problem = payloadProblem(payload);
      if (problem !== null) return { ok: false, problem: `Invalid start: ${problem}`, id };
      return { ok: true, message: { type, id, payload: payload as unknown as OperationRequest } };
    }
    default:
      return {
        ok: false,
        problem: `Invalid message: unknown type ${JSON.stringify(type) ?? 'undefined'} (expected one of ${TYPES})`,
      };
  }
}

function payloadProblem(payload: unknown): string | null {
  if (!isRecord(payload)) return 'the payload must be an object';
  if (typeof payload['query'] !== 'string') return 'payload.query must be a string';
  const { variables, operationName } = payload;
  if (variables !== undefined && variables !== null && !isRecord(variables)) {
    return 'payload.variables must be an object';
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return 'payload.operationName must be a string';
  }
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

import { parseEventText, type EventStamp } from '../load/event-payload.js';

/**
 * The graphql-transport-ws messages of the fan-out load clients, built and read by hand: the
 * graphql-ws client would cost the load generator more than the messages themselves.
 */

export const FANOUT_TOPIC = 'bench/fanout';

export const FANOUT_SUBSCRIPTION = `subscription Fanout { topic(filter: "${FANOUT_TOPIC}") { topic payload } }`;

export const PUBLISH_MUTATION =
  'mutation Publish($topic: String!, $payload: String!) { publish(topic: $topic, payload: $payload) }';

export function connectionInit(): string {
  return JSON.stringify({ type: 'connection_init' });
}

export function subscribeMessage(id: string, query: string, variables?: Record<string, unknown>): string {
  return JSON.stringify({ id, type: 'subscribe', payload: variables ? { query, variables } : { query } });
}

export type ServerMessage =
  | { readonly type: 'connection_ack' | 'ping' | 'pong' }
  | { readonly type: 'next'; readonly id: string; readonly payload: unknown }
  | { readonly type: 'error'; readonly id: string; readonly payload: unknown }
  | { readonly type: 'complete'; readonly id: string };

/** A server message, or a short label saying why it is not one. */
export function readServerMessage(text: string): ServerMessage | string {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'server message is not JSON';
  }
  if (typeof message !== 'object' || message === null) return 'server message is not an object';
  const { type, id } = message as { type?: unknown; id?: unknown };
  switch (type) {
    case 'connection_ack':
    case 'ping':
    case 'pong':
      return { type };
    case 'next':
    case 'error':
    case 'complete':
      if (typeof id !== 'string') return `"${type}" without an id`;
      return { ...(message as object), type, id } as ServerMessage;
    default:
      return `unexpected server message type ${JSON.stringify(type)}`;
  }
}

/** The event stamp of a `next` on the fan-out subscription, or a label saying what was wrong. */
export function readDelivery(text: string, subscriptionId: string): EventStamp | string {
  const message = readServerMessage(text);
  if (typeof message === 'string') return message;
  if (message.type !== 'next') return `subscriber got "${message.type}"`;
  if (message.id !== subscriptionId) return 'subscriber got a next for another id';
  const data = (message.payload as { data?: { topic?: { topic?: unknown; payload?: unknown } } }).data;
  if (data?.topic?.topic !== FANOUT_TOPIC) return 'next without the fan-out topic';
  const stamp = typeof data.topic.payload === 'string' ? parseEventText(data.topic.payload) : null;
  return stamp ?? 'next with a malformed payload';
}

/** For the publisher: the `publish` count in a mutation's `next`, or a label saying what was wrong. */
export function readPublishResult(payload: unknown): number | string {
  const result = payload as { data?: { publish?: unknown }; errors?: unknown };
  if (result.errors !== undefined) return `mutation errors: ${JSON.stringify(result.errors).slice(0, 120)}`;
  const reached = result.data?.publish;
  return typeof reached === 'number' ? reached : 'mutation result without a publish count';
}

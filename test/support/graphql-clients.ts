import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { droppedEvents, type TestBroker } from './test-broker.js';

const TIMEOUT_MS = 3000;

export type ExecutionResult = FormattedExecutionResult<Record<string, unknown>, unknown>;

/** The real graphql-ws client, without retries so a refusal surfaces as an error. */
export function transportClient(url: string, connectionParams?: Record<string, unknown>): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(connectionParams === undefined ? {} : { connectionParams }),
  });
}

/** One query or mutation through the client: its single result, or the error (a CloseEvent or GraphQL errors). */
export function request(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Promise<ExecutionResult> {
  return new Promise((resolve, reject) => {
    let last: ExecutionResult | undefined;
    const timer = setTimeout(() => reject(new Error(`timed out running ${query}`)), TIMEOUT_MS);
    client.subscribe(
      { query, ...(variables === undefined ? {} : { variables }) },
      {
        next: (value) => {
          last = value;
        },
        error: (err) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : Object.assign(new Error('operation failed'), { detail: err }));
        },
        complete: () => {
          clearTimeout(timer);
          if (last === undefined) reject(new Error('completed without a result'));
          else resolve(last);
        },
      },
    );
  });
}

/** A running subscription whose results are buffered, so none is lost between awaits. */
export class Subscription {
  private readonly results: ExecutionResult[] = [];
  private waiter: ((value: ExecutionResult) => void) | null = null;
  readonly stop: () => void;

  constructor(client: Client, query: string, variables?: Record<string, unknown>) {
    this.stop = client.subscribe(
      { query, ...(variables === undefined ? {} : { variables }) },
      {
        next: (value) => {
          if (this.waiter === null) return void this.results.push(value);
          const waiter = this.waiter;
          this.waiter = null;
          waiter(value);
        },
        // A failed subscription shows as a timeout in next(); the suites assert on results.
        error: () => undefined,
        complete: () => undefined,
      },
    );
  }

  next(): Promise<ExecutionResult> {
    const value = this.results.shift();
    if (value !== undefined) return Promise.resolve(value);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error('timed out waiting for a subscription result'));
      }, TIMEOUT_MS);
      this.waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }

  /** The next result whose topic payload is not a readiness probe. */
  async nextEvent(): Promise<Record<string, unknown>> {
    for (;;) {
      const result = await this.next();
      const topic = (result.data as { topic?: Record<string, unknown> } | undefined)?.topic;
      if (topic === undefined) throw new Error(`unexpected result ${JSON.stringify(result)}`);
      if (topic['payload'] !== PROBE) return topic;
    }
  }
}

export const PROBE = 'probe';

/**
 * Publishes probes on `topic` until one is delivered (to `subscribers` subscriptions): from then on the
 * subscriptions under test are live, so the next real publication cannot race them.
 * Subscription.nextEvent skips the probes.
 */
export async function untilDelivered(client: Client, topic: string, subscribers = 1): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const result = await request(
      client,
      'mutation($t: String!, $p: String!) { publish(topic: $t, payload: $p) }',
      {
        t: topic,
        p: PROBE,
      },
    );
    if (((result.data as { publish?: number } | undefined)?.publish ?? 0) >= subscribers) return;
    if (Date.now() > deadline) throw new Error(`nothing subscribed to ${topic} in time`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Publishes `payload` to `topic` again and again until the broker drops an event for a client that
 * stopped reading (bounded: a few MB of socket buffers); whether it did.
 */
export async function floodUntilDropped(
  broker: TestBroker,
  endpoint: string,
  publisher: Client,
  topic: string,
  payload: string,
): Promise<boolean> {
  const flood = `mutation($p: String!) { publish(topic: "${topic}", payload: $p) }`;
  const before = await droppedEvents(broker, endpoint);
  for (let i = 0; i < 2000 && (await droppedEvents(broker, endpoint)) === before; i++)
    await request(publisher, flood, { p: payload });
  return (await droppedEvents(broker, endpoint)) > before;
}

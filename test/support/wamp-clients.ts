import { createRequire } from 'node:module';
import { Wampy } from 'wampy';
import WebSocket from 'ws';

const TIMEOUT_MS = 3000;

type WampyOptions = ConstructorParameters<typeof Wampy>[1];

/** Rejects after the timeout, so a client that never answers fails the test instead of hanging it. */
export function within<T>(what: string, promise: Promise<T>, ms = TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves with the first value a callback is given. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export async function connectWampy(url: string, options: Partial<WampyOptions> = {}): Promise<Wampy> {
  const wampy = new Wampy(url, {
    realm: 'realm1',
    autoReconnect: false,
    ws: WebSocket,
    ...options,
  } as WampyOptions);
  await within('wampy to connect', wampy.connect());
  return wampy;
}

// autobahn ships no types: the part of its API the tests use.
export interface AutobahnSession {
  readonly id: number;
  subscribe(
    topic: string,
    handler: (args: unknown[], kwargs: Record<string, unknown>, details: Record<string, unknown>) => void,
    options?: object,
  ): Promise<{ id: number }>;
  publish(
    topic: string,
    args?: unknown[],
    kwargs?: object,
    options?: object,
  ): Promise<{ id: number }> | undefined;
  call(procedure: string, args?: unknown[], kwargs?: object, options?: object): AutobahnCall;
  register(
    procedure: string,
    endpoint: (args: unknown[], kwargs: Record<string, unknown>, details: AutobahnInvocation) => unknown,
    options?: object,
  ): Promise<{ id: number }>;
}

/** A when.js promise: `then` takes a third, progress, callback. */
export interface AutobahnCall {
  then(
    ok: (value: unknown) => void,
    fail?: (err: unknown) => void,
    progress?: (value: unknown) => void,
  ): unknown;
  cancel(options?: object): void;
}

/** The outcome of an autobahn call as a plain promise. */
export function settled(call: AutobahnCall, progress?: (value: unknown) => void): Promise<unknown> {
  return new Promise((resolve, reject) => call.then(resolve, reject, progress));
}

export interface AutobahnInvocation {
  readonly procedure?: string;
  readonly caller?: number;
  readonly caller_authid?: string;
  readonly progress?: ((args: unknown[]) => void) | null;
}

interface AutobahnConnection {
  onopen: (session: AutobahnSession, details: Record<string, unknown>) => void;
  onclose: (reason: string, details: { reason?: string; message?: string }) => boolean;
  open(): void;
  close(): void;
}

interface AutobahnModule {
  Connection: new (options: object) => AutobahnConnection;
  Error: new (error: string, args?: unknown[], kwargs?: object) => Error;
  auth_cra: {
    sign(key: string, challenge: string): string;
    derive_key(secret: string, salt: string, iterations: number, keylen: number): string;
  };
}

// CommonJS; on Node 20 (no global WebSocket) it uses its own `ws` transport.
export const autobahn = createRequire(import.meta.url)('autobahn') as AutobahnModule;

export interface OpenAutobahn {
  readonly session: AutobahnSession;
  readonly details: Record<string, unknown>;
  close(): void;
}

/** Opens a session, or rejects with the router's ABORT reason. Never retries. */
export function openAutobahn(url: string, options: object = {}): Promise<OpenAutobahn> {
  const connection = new autobahn.Connection({
    url,
    realm: 'realm1',
    max_retries: 0,
    retry_if_unreachable: false,
    ...options,
  });
  return within(
    'autobahn to connect',
    new Promise<OpenAutobahn>((resolve, reject) => {
      connection.onopen = (session, details) =>
        resolve({ session, details, close: () => connection.close() });
      connection.onclose = (reason, details) => {
        reject(new Error(`${details.reason ?? reason}: ${details.message ?? ''}`));
        return true;
      };
      connection.open();
    }),
  );
}

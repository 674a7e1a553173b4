import { RPCClient } from 'ocpp-rpc';
import WebSocket, { type ClientOptions as WsClientOptions } from 'ws';
import { opened } from './ws-helpers.js';

const TIMEOUT_MS = 3000;

/** The OCPP endpoint as the default configuration serves it. */
export const OCPP_ENDPOINT = {
  path: '/ocpp/:chargePointId',
  subprotocols: ['ocpp1.6'],
  defaultModule: 'ocpp1.6',
};

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

/**
 * ocpp-rpc's RPCClient as a real charge point, in strict mode: every payload we send it and every
 * answer we give is checked against the 1.6 schemas on its side. No reconnects: a test decides.
 */
export function chargePoint(
  baseUrl: string,
  identity: string,
  options: Partial<ClientOptions> = {},
): InstanceType<typeof RPCClient> {
  return new RPCClient({
    endpoint: `${baseUrl}/ocpp`,
    identity,
    protocols: ['ocpp1.6'],
    strictMode: true,
    reconnect: false,
    callTimeoutMs: TIMEOUT_MS,
    ...options,
  } as ClientOptions);
}

export const BOOT = { chargePointVendor: 'Acme', chargePointModel: 'Volt 22' };

/** A raw `ws` charge point, for frames no real client would send. */
export async function rawChargePoint(baseUrl: string, identity: string): Promise<WebSocket> {
  const ws = new WebSocket(`${baseUrl}/ocpp/${encodeURIComponent(identity)}`, 'ocpp1.6');
  await opened(ws);
  return ws;
}

/** The next message, parsed (OCPP-J frames are JSON arrays). */
export function nextFrame(ws: WebSocket): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for an OCPP frame')), TIMEOUT_MS);
    ws.once('message', (data: Buffer) => {
      clearTimeout(timer);
      resolve(JSON.parse(data.toString('utf8')) as unknown[]);
    });
  });
}

/** The next `count` frames, parsed, however fast they come. */
export function nextFrames(ws: WebSocket, count: number): Promise<unknown[][]> {
  return new Promise((resolve, reject) => {
    const frames: unknown[][] = [];
    const onMessage = (data: Buffer): void => {
      frames.push(JSON.parse(data.toString('utf8')) as unknown[]);
      if (frames.length < count) return;
      clearTimeout(timer);
      ws.off('message', onMessage);
      resolve(frames);
    };
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      reject(new Error(`timed out waiting for ${count} OCPP frames, got ${JSON.stringify(frames)}`));
    }, TIMEOUT_MS);
    ws.on('message', onMessage);
  });
}

/** Sends one text message and resolves with the next frame received. */
export async function exchange(ws: WebSocket, text: string): Promise<unknown[]> {
  const answer = nextFrame(ws);
  ws.send(text);
  return answer;
}

/** Sends a BootNotification over a raw socket and checks it was Accepted. */
export async function rawBoot(ws: WebSocket): Promise<void> {
  const answer = await exchange(ws, JSON.stringify([2, 'boot', 'BootNotification', BOOT]));
  const status = (answer[2] as { status?: string } | undefined)?.status;
  if (answer[0] !== 3 || status !== 'Accepted')
    throw new Error(`boot not accepted: ${JSON.stringify(answer)}`);
}

/** The value of one Prometheus counter sample, 0 when absent. */
export async function counter(httpBase: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${httpBase}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** A handshake the broker must refuse: its status, headers and body (`ws` options for TLS and the like). */
export function refusal(
  url: string,
  headers: Record<string, string> = {},
  options: WsClientOptions = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'ocpp1.6', { ...options, headers });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        ws.terminate();
      });
    });
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.on('error', () => undefined);
  });
}

import WebSocket from 'ws';
import { openClient } from './load/ws-client.js';

const TIMEOUT_MS = 10_000;

/** A chat client in its own room: each round trip is a `say` heard back through the bus. */
export class Bystander {
  private constructor(private readonly ws: WebSocket) {}

  static async open(port: number): Promise<Bystander> {
    const ws = await openClient({ port, path: '/chat', subprotocol: 'chat.v1' }, TIMEOUT_MS);
    const joined = new Promise<void>((resolve) => {
      ws.on('message', function onJoined(data: Buffer) {
        if (!data.toString().includes('"joined"')) return;
        ws.off('message', onJoined);
        resolve();
      });
    });
    ws.send(JSON.stringify({ type: 'join', room: 'bystander' }));
    await joined;
    return new Bystander(ws);
  }

  /** Round trips every `intervalMs` until `until` (performance.now() time) or `maxSamples` of them. */
  async measure(
    until: number,
    intervalMs: number,
    maxSamples = Infinity,
  ): Promise<{ latencies: number[]; errors: number }> {
    const latencies: number[] = [];
    let errors = 0;
    for (let seq = 0; performance.now() < until && seq < maxSamples; seq++) {
      const text = `rtt ${seq}`;
      const heard = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), TIMEOUT_MS);
        const onMessage = (data: Buffer) => {
          if (!data.toString().includes(text)) return;
          clearTimeout(timer);
          this.ws.off('message', onMessage);
          resolve(true);
        };
        this.ws.on('message', onMessage);
      });
      const sent = performance.now();
      this.ws.send(JSON.stringify({ type: 'say', room: 'bystander', text }));
      if (await heard) latencies.push(performance.now() - sent);
      else errors++;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    return { latencies, errors };
  }

  close(): void {
    this.ws.close();
  }
}

import type WebSocket from 'ws';

const TIMEOUT_MS = 3000;

/**
 * Every text message of a socket, buffered from the moment it is attached, so messages arriving
 * back to back are never lost between two awaits.
 */
export class MessageQueue {
  private readonly buffered: string[] = [];
  private waiter: ((text: string) => void) | null = null;

  constructor(ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (this.waiter === null) return void this.buffered.push(text);
      const waiter = this.waiter;
      this.waiter = null;
      waiter(text);
    });
  }

  next(timeoutMs = TIMEOUT_MS): Promise<string> {
    const text = this.buffered.shift();
    if (text !== undefined) return Promise.resolve(text);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error('timed out waiting for a message'));
      }, timeoutMs);
      this.waiter = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
    });
  }

  async json(timeoutMs?: number): Promise<Record<string, unknown>> {
    return JSON.parse(await this.next(timeoutMs)) as Record<string, unknown>;
  }

  /** Forgets the messages received and not yet taken. */
  clear(): void {
    this.buffered.length = 0;
  }

  /** Messages received and not yet taken. */
  pending(): readonly string[] {
    return this.buffered;
  }
}

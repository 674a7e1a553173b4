import { WebSocket } from 'ws';
import {
  connectPacket,
  PACKET,
  PacketSplitter,
  packetIdOf,
  pubackPacket,
  readPublish,
  subscribePacket,
  type ReceivedPublish,
} from './mqtt-wire.js';
import { WriteBatcher } from '../load/write-batcher.js';
import { withTimeout } from '../protocol-bench/async-util.js';

export interface ClientHandlers {
  onPublish?: (publish: ReceivedPublish) => void;
  onPuback?: (packetId: number) => void;
  /** Anything the benchmark did not ask for: a malformed packet, an unexpected close. */
  onError: (label: string) => void;
}

/**
 * A raw `ws` MQTT 3.1.1 client: no MQTT.js, whose per-message cost would make the load generator
 * the bottleneck. QoS 1 PUBLISHes it receives are acknowledged at once.
 */
export class BenchClient {
  private readonly splitter = new PacketSplitter();
  private waiting: { type: number; resolve: (packet: Buffer) => void } | null = null;
  private closing = false;

  private constructor(
    private readonly ws: WebSocket,
    private readonly batcher: WriteBatcher | null,
    private readonly handlers: ClientHandlers,
  ) {
    ws.on('message', (data: Buffer) => this.splitter.push(data, (packet) => this.onPacket(packet)));
    ws.on('close', (code) => {
      if (!this.closing) handlers.onError(`closed by the server (${code})`);
    });
    ws.on('error', (err) => handlers.onError(`socket error: ${err.message}`));
  }

  /**
   * Opens the WebSocket and completes CONNECT/CONNACK (return code 0), within timeoutMs. With
   * `batchWrites`, what the client sends in one tick leaves in one write (WriteBatcher).
   */
  static async connect(
    url: string,
    clientId: string,
    handlers: ClientHandlers,
    timeoutMs: number,
    batchWrites = false,
    clean = true,
  ): Promise<BenchClient> {
    const batcher = batchWrites ? new WriteBatcher('tick') : null;
    const ws = new WebSocket(url, 'mqtt', {
      perMessageDeflate: false,
      handshakeTimeout: timeoutMs,
      ...(batcher && { createConnection: batcher.createConnection }),
    });
    const client = new BenchClient(ws, batcher, handlers);
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
          ws.once('close', (code) => reject(new Error(`closed before open (${code})`)));
        }),
        timeoutMs,
        'WebSocket open',
      );
      const connack = await client.request(connectPacket(clientId, clean), PACKET.CONNACK, timeoutMs);
      if (connack[3] !== 0) throw new Error(`CONNACK return code ${connack[3]}`);
      return client;
    } catch (err) {
      client.closing = true;
      ws.terminate();
      throw err;
    }
  }

  async subscribe(topic: string, qos: 0 | 1, timeoutMs: number): Promise<void> {
    const suback = await this.request(subscribePacket(topic, qos, 1), PACKET.SUBACK, timeoutMs);
    if (suback[4] !== qos) throw new Error(`SUBACK granted ${suback[4]} for QoS ${qos}`);
  }

  send(packet: Buffer): void {
    this.batcher?.hold();
    this.ws.send(packet);
  }

  /** Bytes ws has accepted but not yet written: the load generator's own backlog. */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Closes the WebSocket (no DISCONNECT: a clean-session client loses nothing); resolves on close. */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    this.ws.close(1000);
    try {
      await withTimeout(closed, timeoutMs, 'close');
    } catch {
      this.ws.terminate();
    }
  }

  private request(packet: Buffer, type: number, timeoutMs: number): Promise<Buffer> {
    const answer = new Promise<Buffer>((resolve) => {
      this.waiting = { type, resolve };
    });
    this.ws.send(packet);
    return withTimeout(answer, timeoutMs, `packet type ${type}`);
  }

  private onPacket(packet: Buffer): void {
    const type = (packet[0] as number) >> 4;
    if (type === PACKET.PUBLISH) {
      const publish = readPublish(packet);
      if (publish === null) {
        this.handlers.onError('malformed PUBLISH');
        return;
      }
      if (publish.qos === 1) this.send(pubackPacket(publish.packetId));
      this.handlers.onPublish?.(publish);
    } else if (type === PACKET.PUBACK) {
      this.handlers.onPuback?.(packetIdOf(packet));
    } else if (this.waiting?.type === type) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve(packet);
    } else {
      this.handlers.onError(`unexpected packet type ${type}`);
    }
  }
}

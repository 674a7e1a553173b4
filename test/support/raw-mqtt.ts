import mqttPacket, { type Packet } from 'mqtt-packet';
import WebSocket from 'ws';
import { closed, opened, type CloseEvent } from './ws-helpers.js';

const TIMEOUT_MS = 3000;

/** A hand-driven MQTT client over a raw WebSocket, for packets MQTT.js would never send. */
export class RawMqtt {
  readonly ws: WebSocket;
  private readonly packets: Packet[] = [];
  private readonly waiters: (() => void)[] = [];
  private readonly closing: Promise<CloseEvent>;

  private constructor(
    url: string,
    protocol: string,
    private readonly version: number,
  ) {
    this.ws = new WebSocket(url, protocol);
    this.closing = closed(this.ws, 10_000);
    // Only a caller of `closed()` hears that it did not close in time: a client kept open longer is no failure.
    this.closing.catch(() => undefined);
    const parser = mqttPacket.parser({ protocolVersion: version });
    parser.on('packet', (packet: Packet) => {
      this.packets.push(packet);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.ws.on('message', (data: Buffer) => parser.parse(data));
    this.ws.on('close', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(url: string, version = 5, protocol = 'mqtt'): Promise<RawMqtt> {
    const raw = new RawMqtt(url, protocol, version);
    await opened(raw.ws);
    return raw;
  }

  /** Opens, sends CONNECT and checks the CONNACK accepted. */
  static async connected(url: string, connect: Partial<mqttPacket.IConnectPacket> = {}): Promise<RawMqtt> {
    const version = connect.protocolVersion ?? 5;
    const raw = await RawMqtt.open(url, version);
    raw.send({
      cmd: 'connect',
      protocolVersion: version,
      clientId: '',
      clean: true,
      keepalive: 0,
      ...connect,
    });
    const connack = await raw.next('connack');
    if ((connack.reasonCode ?? connack.returnCode ?? 0) !== 0) throw new Error('CONNECT refused');
    return raw;
  }

  send(packet: Packet): void {
    this.ws.send(mqttPacket.generate(packet, { protocolVersion: this.version }));
  }

  sendBytes(bytes: Buffer | number[]): void {
    this.ws.send(Buffer.from(bytes));
  }

  /** The next packet of that type received (earlier ones of other types stay readable). */
  async next<C extends Packet['cmd']>(cmd: C, timeoutMs = TIMEOUT_MS): Promise<Extract<Packet, { cmd: C }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.packets.findIndex((p) => p.cmd === cmd);
      if (index >= 0) return this.packets.splice(index, 1)[0] as Extract<Packet, { cmd: C }>;
      const left = deadline - Date.now();
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) throw new Error(`no ${cmd} received`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  received(): readonly Packet[] {
    return this.packets;
  }

  closed(): Promise<CloseEvent> {
    return this.closing;
  }
}

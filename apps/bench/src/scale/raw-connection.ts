import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { checkUpgradeResponse } from '../check-response.js';
import { connectPacket, PACKET } from '../mqtt/mqtt-wire.js';
import { acceptFor, upgradeRequest } from '../upgrade-request.js';
import { maskedFrame, OPCODE, readServerFrame } from './ws-frames.js';

export type IdleKind = 'mqtt' | 'chat';

const TARGETS: Readonly<Record<IdleKind, { path: string; subprotocol: string }>> = {
  mqtt: { path: '/mqtt', subprotocol: 'mqtt' },
  chat: { path: '/chat', subprotocol: 'chat.v1' },
};

export interface RawTarget {
  readonly port: number;
  readonly kind: IdleKind;
  /** The source address to bind; 127.0.0.1 for the probes. */
  readonly localAddress: string;
  /** The MQTT client id (unique: Mosquitto drops the older of two connections with one id). */
  readonly clientId: string;
}

/**
 * A raw `node:net` WebSocket connection, checked at each step: status 101 with the right accept and
 * subprotocol, then for MQTT a CONNECT (keep-alive 600 s) answered by CONNACK return code 0. Resolves
 * with the socket (flowing, anything further read and dropped); rejects with a short label to count.
 */
export function openRaw(target: RawTarget, timeoutMs: number): Promise<Socket> {
  const { path, subprotocol } = TARGETS[target.kind];
  const key = randomBytes(16).toString('base64');
  const request = upgradeRequest(
    { port: target.port, path, subprotocol, token: null, origin: `http://127.0.0.1:${target.port}` },
    key,
  );
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: target.port, localAddress: target.localAddress });
    let received: Buffer = Buffer.alloc(0);
    let upgraded = false;
    const fail = (why: string): void => {
      socket.destroy();
      reject(new Error(why));
    };
    const succeed = (): void => {
      socket.setTimeout(0);
      socket.removeAllListeners('data');
      socket.removeAllListeners('timeout');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      socket.on('data', () => undefined);
      // A later error ends in 'close', which the owner watches.
      socket.on('error', () => undefined);
      resolve(socket);
    };
    socket.setNoDelay(true);
    socket.setTimeout(timeoutMs, () => fail(upgraded ? 'no CONNACK in time' : 'no 101 in time'));
    socket.once('error', (err: NodeJS.ErrnoException) => fail(`socket error ${err.code ?? err.message}`));
    socket.once('close', () => fail(upgraded ? 'closed before CONNACK' : 'closed before 101'));
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      if (!upgraded) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const problem = checkUpgradeResponse(
          received.subarray(0, end).toString('latin1'),
          acceptFor(key),
          subprotocol,
        );
        if (problem !== null) return fail(problem);
        upgraded = true;
        received = received.subarray(end + 4);
        if (target.kind === 'chat') return succeed();
        socket.write(maskedFrame(OPCODE.BINARY, connectPacket(target.clientId)));
      }
      const frame = readServerFrame(received);
      if (frame === null) return;
      const packet = frame.payload;
      if (
        frame.opcode !== OPCODE.BINARY ||
        (packet[0] as number) >> 4 !== PACKET.CONNACK ||
        packet.length < 4
      )
        return fail(`not a CONNACK (opcode ${frame.opcode}, first byte ${packet[0]})`);
      if (packet[3] !== 0) return fail(`CONNACK return code ${packet[3]}`);
      succeed();
    });
  });
}

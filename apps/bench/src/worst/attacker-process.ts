import WebSocket from 'ws';
import { openClient } from '../load/ws-client.js';
import { type AttackerReport } from './attacker-report.js';
import { ATTACKS, type MessageAttack } from './attacks.js';

/**
 * One attacker, in a process of its own: in the bystander's process, its thousands of client
 * handshakes a second would delay the bystander's own timers, and the measure would be of the load
 * generator. Argv: port, the attack's index in ATTACKS, seconds. Sends the attack message, waits for
 * its one answer (a message or the close), and again, until the time is up; a refused handshake (429
 * past the handshake rate, or a connection closed at accept once the address floods) is tried again
 * at once, as a flooding client would. Then it reports
 * `{ answered, reconnects, refused }` to its parent and exits.
 */
const TIMEOUT_MS = 10_000;
/** The attacker's own address: the bystander's (127.0.0.1) does not share its handshake rate. */
const ATTACKER_ADDRESS = '127.0.0.2';
/** A handshake refused: 429 past the rate, or the connection closed at accept past that (a flood). */
const REFUSED = /^(HTTP 429|read ECONNRESET|socket hang up)$/;

const [port, index, seconds] = process.argv.slice(2).map(Number);
process.on('disconnect', () => process.exit(0));
const attack = ATTACKS[index ?? -1];
if (attack === undefined || port === undefined || seconds === undefined) {
  throw new Error(`attacker: bad arguments ${process.argv.slice(2).join(' ')}`);
}
const until = performance.now() + seconds * 1000;
const result =
  attack.kind === 'message'
    ? await attackLoop(port, attack, until)
    : await attack.run({ port, localAddress: ATTACKER_ADDRESS }, until);
process.send?.(result, () => process.exit(0));

async function attackLoop(port: number, attack: MessageAttack, until: number): Promise<AttackerReport> {
  let answered = 0;
  let reconnects = -1;
  let refused = 0;
  let seq = 0;
  const target = { port, path: attack.path, subprotocol: attack.subprotocol, localAddress: ATTACKER_ADDRESS };
  while (performance.now() < until) {
    const ws = await openClient(target, TIMEOUT_MS).catch((err: unknown) => {
      if (!(err instanceof Error && REFUSED.test(err.message))) throw err;
      refused++;
      return null;
    });
    if (ws === null) continue;
    reconnects++;
    for (const step of attack.setup) {
      ws.send(step);
      await answer(ws);
    }
    while (performance.now() < until && ws.readyState === WebSocket.OPEN) {
      ws.send(attack.message(seq++));
      if (await answer(ws)) answered++;
    }
    ws.terminate();
  }
  return { answered, reconnects: Math.max(0, reconnects), refused };
}

/** The next message or the close: true once either arrives, false on a timeout. */
function answer(ws: WebSocket): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (result: boolean) => {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onMessage);
      resolve(result);
    };
    const onMessage = () => done(true);
    const timer = setTimeout(() => done(false), TIMEOUT_MS);
    ws.once('message', onMessage);
    ws.once('close', onMessage);
  });
}

import { ErrorCounts } from '../load/error-counts.js';
import { WriteBatcher } from '../load/write-batcher.js';
import { type CalleeCommand, type CalleeReport } from './callee-ipc.js';
import { expectType, readMessage, register, WAMP, yieldResult, ARGS_INDEX } from './wamp-load-messages.js';
import { openSession } from './wamp-session.js';

/**
 * The RPC callee, in a process of its own: in the callers' process it would share their event loop,
 * and the router would wait on the load generator's turns rather than work. Argv: port, timeout in
 * ms, procedure. Tells its parent `ready` once registered; on `stop`, reports its errors and exits.
 */
const [port, timeoutMs, procedure] = process.argv.slice(2);
const errors = new ErrorCounts();
let stopping = false;
const send = (report: CalleeReport): Promise<void> =>
  new Promise((resolve) => process.send?.(report, () => resolve()));

// The parent gone (killed, Ctrl-C): nothing left to answer for.
process.on('disconnect', () => process.exit(0));

/** The YIELDs answering one turn's INVOCATIONs leave in one write, as the routers batch those. */
const batcher = new WriteBatcher('turn');

try {
  const session = await openSession(Number(port), 'callee', Number(timeoutMs), batcher);
  await session.request(register(1, procedure ?? ''), WAMP.REGISTERED, 'REGISTERED');
  session.inbox.forEach(
    (text) => {
      const invocation = expectType(readMessage(text), WAMP.INVOCATION);
      if (typeof invocation === 'string') return errors.add(`callee: ${invocation}`);
      batcher.hold();
      session.ws.send(
        yieldResult(invocation[1] as number, invocation[ARGS_INDEX[WAMP.INVOCATION]] as unknown[]),
      );
    },
    (why) => {
      if (!stopping) errors.add(`callee ${why}`);
    },
  );
  process.on('message', (message: CalleeCommand | null) => {
    if (message?.type !== 'stop') return;
    stopping = true;
    session.ws.close(1000);
    void send({ type: 'stopped', errors: [...errors.byLabel] }).then(() => process.exit(0));
  });
  await send({ type: 'ready' });
} catch (err) {
  await send({ type: 'failed', message: (err as Error).message });
  process.exit(1);
}

import { type Socket } from 'node:net';
import { ErrorCounts } from '../load/error-counts.js';
import { inBatches } from '../protocol-bench/async-util.js';
import { type GeneratorCommand, type GeneratorJob, type GeneratorReport } from './generator-ipc.js';
import { openRaw } from './raw-connection.js';
import { kindOf, sourceAddress } from './scale-options.js';

/**
 * A generator process of the idle population: opens its share of connections, `parallel` at a time,
 * keeps them open and silent, and counts every failed handshake and every close as an error.
 */
const job = JSON.parse(process.argv[2] ?? '{}') as GeneratorJob;
const errors = new ErrorCounts();
const sockets = new Set<Socket>();
let stopping = false;
let openMs = 0;

const send = (report: GeneratorReport): Promise<void> =>
  new Promise((resolve) => process.send?.(report, () => resolve()));
const report = (type: GeneratorReport['type']): GeneratorReport => ({
  type,
  open: sockets.size,
  openMs,
  errors: [...errors.byLabel],
});

// The parent gone (killed, Ctrl-C): nothing left to answer for.
process.on('disconnect', () => process.exit(0));

process.on('message', (message: GeneratorCommand) => {
  if (message.type === 'status') {
    void send(report('status'));
    return;
  }
  stopping = true;
  const final = report('stopped');
  for (const socket of sockets) socket.destroy();
  void send(final).then(() => process.exit(0));
});

const started = performance.now();
await inBatches(job.count, job.parallel, async (i) => {
  const index = job.start + i;
  const kind = kindOf(index, job.mix);
  try {
    const socket = await openRaw(
      { port: job.port, kind, localAddress: sourceAddress(index, job.addresses), clientId: `idle-${index}` },
      job.timeoutMs,
    );
    if (stopping) return socket.destroy();
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (!stopping) errors.add(`${kind}: closed after the handshake`);
    });
  } catch (err) {
    errors.add(`${kind}: ${(err as Error).message}`);
  }
});
openMs = performance.now() - started;
await send(report('opened'));

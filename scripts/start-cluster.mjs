// Broker nodes on this machine, one cluster: `npm run start:cluster`. Variables (README, "Several nodes"):
//   CLUSTER_NODES      how many nodes (3)
//   CLUSTER_BASE_PORT  the first node's port, the others follow (8081)
//   CLUSTER_ID_PREFIX  node ids are <prefix>n1, <prefix>n2, ... (this host's name and a dash, so that two
//                      machines on one NATS do not collide)
//   NATS_URL           the machine's NATS unless set (nats://127.0.0.1:4222)
//   DATABASE_URL       the machine's PostgreSQL unless set (postgres://postgres@127.0.0.1:5432/test)
// Each node's lines are prefixed with its id. A node that exits is started again (after 1 s, then 2, 4
// ... up to 30 s while it keeps failing within 10 s of its start); the others stay up. Ctrl-C stops all.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { createInterface } from 'node:readline';
import { URL } from 'node:url';

const main = new URL('../dist/src/main.js', import.meta.url).pathname;
const basePort = Number(process.env.CLUSTER_BASE_PORT ?? 8081);
const nodes = Number(process.env.CLUSTER_NODES ?? 3);
// A node id is a NATS subject token: letters, digits, - and _ only, at most 64 of them.
const prefix = (process.env.CLUSTER_ID_PREFIX ?? `${hostname()}-`)
  .replace(/[^A-Za-z0-9_-]/g, '-')
  .slice(0, 56);
const env = {
  ...process.env,
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
};
const STEADY_MS = 10_000;
const MAX_DELAY_MS = 30_000;

const children = new Map();
const restarts = new Set();
let stopping = false;

function start(index, delayMs = 1000) {
  const id = `${prefix}n${index + 1}`;
  const port = basePort + index;
  const startedAt = Date.now();
  const child = spawn(process.execPath, [main], {
    env: { ...env, NODE_ID: id, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${id} | ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    children.delete(index);
    if (stopping) return;
    // A node that ran a while is started again at once (1 s); one that keeps failing, less and less often.
    const next = Date.now() - startedAt > STEADY_MS ? 1000 : Math.min(delayMs * 2, MAX_DELAY_MS);
    process.stdout.write(`${id} | exited (${signal ?? code}); starting it again in ${next / 1000} s\n`);
    // Referenced: when every node is waiting to start again, this timer is what keeps the launcher up.
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (!stopping) start(index, next);
    }, next);
    restarts.add(timer);
  });
  children.set(index, child);
  process.stdout.write(`${id} | ws://127.0.0.1:${port}\n`);
}

function stop() {
  if (stopping) return;
  stopping = true;
  for (const timer of restarts) clearTimeout(timer);
  for (const child of children.values()) child.kill('SIGTERM');
}

// One at a time is not needed: migrations take a lock, and every node waits for NATS on its own.
for (let i = 0; i < nodes; i++) start(i);
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

// Three broker nodes on this machine, one cluster: `npm run start:cluster`.
// Ports 8081-8083 (CLUSTER_BASE_PORT to move them), the machine's NATS and PostgreSQL unless NATS_URL and
// DATABASE_URL say otherwise. Each node's log lines are prefixed with its id; Ctrl-C stops all three.
import { spawn } from 'node:child_process';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { URL } from 'node:url';

const main = new URL('../dist/src/main.js', import.meta.url).pathname;
const basePort = Number(process.env.CLUSTER_BASE_PORT ?? 8081);
const nodes = Number(process.env.CLUSTER_NODES ?? 3);
const env = {
  ...process.env,
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
};

const children = [];
let stopping = false;

function start(index) {
  const id = `n${index + 1}`;
  const port = basePort + index;
  const child = spawn(process.execPath, [main], {
    env: { ...env, NODE_ID: id, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${id} | ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    process.stdout.write(`${id} | exited (${signal ?? code})\n`);
    if (!stopping) stop(1);
  });
  children.push(child);
  process.stdout.write(`${id} | ws://127.0.0.1:${port}\n`);
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
}

// One at a time is not needed: migrations take a lock, and every node waits for NATS on its own.
for (let i = 0; i < nodes; i++) start(i);
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

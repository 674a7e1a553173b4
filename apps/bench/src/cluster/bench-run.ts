import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killChildrenOnExit } from '../child-servers.js';

/** Variables the broker reads that must come from the benchmark only (a one-process set-up must not join a cluster). */
const BROKER_ENV = ['NATS_URL', 'DATABASE_URL', 'NODE_ID', 'PORT', 'HOST', 'CONFIG'];

/**
 * What a cluster benchmark does before its first server: the broker's variables cleared, children
 * killed on exit, and a folder of its own for configs and nats-server state, removed on exit.
 */
export async function prepareRun(name: string): Promise<string> {
  for (const variable of BROKER_ENV) Reflect.deleteProperty(process.env, variable);
  killChildrenOnExit();
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

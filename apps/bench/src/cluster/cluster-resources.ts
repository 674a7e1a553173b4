import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';

/**
 * What a run creates outside its own processes: PostgreSQL schemas, and the JetStream streams behind
 * the KV buckets of its clusters (`KV_<cluster name>-...`, the nodes' heartbeat bucket). A cluster name
 * is registered before its first node starts, a schema as soon as it exists, so a cleanup after any
 * failure finds them.
 */
export interface ClusterResources {
  readonly natsUrls: readonly string[];
  readonly databaseUrl: string;
  readonly schemas: string[];
  readonly clusterNames: string[];
}

const TIMEOUT_MS = 5_000;
const EXIT_CLEANUP_TIMEOUT_MS = 20_000;

/** A token of the run for schema and cluster names ([a-z0-9], valid in both). */
export function runToken(): string {
  return randomBytes(4).toString('hex');
}

/** Before anything starts: NATS must answer and have JetStream (the nodes keep their heartbeats in a KV bucket). */
export async function expectNatsWithJetStream(natsUrls: readonly string[]): Promise<void> {
  let nc;
  try {
    nc = await connect({ servers: [...natsUrls], timeout: TIMEOUT_MS });
  } catch (err) {
    throw new Error(`NATS at ${natsUrls.join(', ')}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await jetstreamManager(nc);
  } catch (err) {
    throw new Error(`NATS at ${natsUrls.join(', ')}: no JetStream: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    await nc.close();
  }
}

/** Creates the schema; the returned DATABASE_URL makes every connection use it (search_path). */
export async function createSchema(resources: ClusterResources, name: string): Promise<string> {
  try {
    await withClient(resources.databaseUrl, (client) => client.query(`create schema ${name}`));
  } catch (err) {
    // Not the URL: it may hold a password.
    throw new Error(`PostgreSQL (--database-url): ${(err as Error).message}`, { cause: err });
  }
  resources.schemas.push(name);
  const separator = resources.databaseUrl.includes('?') ? '&' : '?';
  return `${resources.databaseUrl}${separator}options=${encodeURIComponent(`-c search_path=${name}`)}`;
}

/** Drops the schemas and deletes the clusters' streams; returns what could not be removed. */
export async function releaseResources(resources: ClusterResources): Promise<string[]> {
  const problems: string[] = [];
  for (const schema of resources.schemas) {
    try {
      await withClient(resources.databaseUrl, (client) =>
        client.query(`drop schema if exists ${schema} cascade`),
      );
    } catch (err) {
      problems.push(`PostgreSQL schema ${schema} not dropped: ${(err as Error).message}`);
    }
  }
  if (resources.clusterNames.length === 0) return problems;
  try {
    const nc = await connect({ servers: [...resources.natsUrls], timeout: TIMEOUT_MS });
    try {
      const jsm = await jetstreamManager(nc);
      const prefixes = resources.clusterNames.map((name) => `KV_${name}-`);
      const names: string[] = [];
      for await (const name of jsm.streams.names()) names.push(name);
      for (const name of names.filter((n) => prefixes.some((prefix) => n.startsWith(prefix)))) {
        await jsm.streams.delete(name);
      }
    } finally {
      await nc.close();
    }
  } catch (err) {
    problems.push(
      `NATS streams of ${resources.clusterNames.join(', ')} not checked or deleted: ${(err as Error).message}`,
    );
  }
  return problems;
}

/**
 * Ctrl-C and process.exit skip finally blocks, and an exit handler cannot wait for a promise: if the
 * run ends before `released()` is called, a child process does the cleanup while this one waits.
 */
export function releaseOnExit(resources: ClusterResources): { released(): void } {
  let released = false;
  process.once('exit', () => {
    if (released) return;
    const script = fileURLToPath(new URL('./release-main.js', import.meta.url));
    // On stdin, not in the arguments: the database URL may hold a password.
    spawnSync(process.execPath, [script], {
      input: JSON.stringify(resources),
      stdio: ['pipe', 'ignore', 'inherit'],
      timeout: EXIT_CLEANUP_TIMEOUT_MS,
    });
  });
  return { released: () => (released = true) };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

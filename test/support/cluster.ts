import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG } from '../../src/default-config.js';
import { freePort } from './free-port.js';
import { createTestSchema, type TestSchema } from './postgres.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';
const START_TIMEOUT_MS = 15_000;

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A nats-server with JetStream of the test's own, on a free port, that the test may stop and restart. */
export class TestNats {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'broker-nats-'));

  private constructor(
    readonly port: number,
    /** Bytes JetStream may keep on disk; undefined: the server's default. */
    private readonly maxFileStore?: number,
  ) {}

  static async start(options: { maxFileStore?: number } = {}): Promise<TestNats> {
    const nats = new TestNats(await freePort(), options.maxFileStore);
    await nats.restart();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /**
   * Starts the server (again, on the same port and store directory; `wipe` empties the directory first,
   * as a server on a new machine would start) and waits until it answers.
   */
  async restart(wipe = false): Promise<void> {
    if (this.child !== null) throw new Error('nats-server is running');
    if (wipe) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true });
    }
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir];
    if (this.maxFileStore !== undefined) {
      const config = join(this.dir, 'nats.conf');
      writeFileSync(config, `jetstream { max_file_store: ${this.maxFileStore} }\n`);
      args.push('-c', config);
    }
    const child = spawn(NATS_SERVER, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const failed = new Promise<never>((_, reject) =>
      child.once('error', (err) => reject(new Error(`cannot run ${NATS_SERVER}: ${err.message}`))),
    );
    this.child = child;
    await Promise.race([
      failed,
      until(`nats-server answers on ${this.port} (${output})`, () => answers(this.port), 10_000),
    ]);
    // JetStream answers a moment after the port opens.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  /** Stops it at once (SIGKILL: no goodbye to the clients), waiting for the exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.child = null;
    if (child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One broker process of a test cluster: the real `npm start` entry point with its own node id. */
export class BrokerNode {
  private output = '';
  private exited: Promise<number | null>;
  port = 0;

  constructor(
    readonly id: string,
    readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get http(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Whether the process still runs. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything the process wrote so far. */
  log(): string {
    return this.output;
  }

  logLines(): Record<string, unknown>[] {
    // The last line may be partly written: only whole lines are parsed.
    return this.output
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async listening(): Promise<void> {
    const exited = this.exited.then((code) => {
      throw new Error(`node ${this.id} exited with ${code} before listening:\n${this.output}`);
    });
    await Promise.race([
      exited,
      until(
        `node ${this.id} listens`,
        () => /"url":"ws:\/\/127\.0\.0\.1:\d+"/.test(this.output),
        START_TIMEOUT_MS,
      ),
    ]);
    this.port = Number(/"url":"ws:\/\/127\.0\.0\.1:(\d+)"/.exec(this.output)?.[1]);
  }

  /** Waits for the exit; resolves with the exit code. */
  exit(): Promise<number | null> {
    return this.exited;
  }

  /** SIGKILL: the node dies with its sockets, no goodbye to NATS or to clients. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM: the node drains and leaves the cluster. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

export interface ClusterOptions {
  /** Extra configuration merged over the default endpoints and the test cluster's settings. */
  readonly config?: Record<string, unknown>;
  /** Bytes the test's nats-server may keep on disk for JetStream. */
  readonly maxFileStore?: number;
}

/**
 * NATS (a server of the test's own), a PostgreSQL schema of its own, and broker processes that join
 * one cluster; every part is real and the nodes are separate OS processes.
 */
export class TestCluster {
  readonly nodes: BrokerNode[] = [];
  private readonly configDir = mkdtempSync(join(tmpdir(), 'broker-cluster-'));
  readonly name = `c${randomBytes(5).toString('hex')}`;

  private constructor(
    readonly nats: TestNats,
    readonly schema: TestSchema,
    private readonly options: ClusterOptions,
  ) {}

  static async start(count: number, options: ClusterOptions = {}): Promise<TestCluster> {
    const nats = await TestNats.start(
      options.maxFileStore === undefined ? {} : { maxFileStore: options.maxFileStore },
    );
    const schema = await createTestSchema();
    const cluster = new TestCluster(nats, schema, options);
    try {
      // One at a time: the first runs the migrations, the others find them done.
      for (let i = 0; i < count; i++) await cluster.startNode();
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /**
   * Starts another node (named n1, n2, ... unless `id` says) and waits until it listens; `config` is laid
   * over the cluster's configuration for this node alone.
   */
  async startNode(
    extra: Record<string, string> = {},
    id = `n${this.nodes.length + 1}`,
    config: Record<string, unknown> = {},
  ): Promise<BrokerNode> {
    const node = this.spawn(id, extra, config);
    this.nodes.push(node);
    await node.listening();
    return node;
  }

  /** A node process that has not been awaited (boot failure tests); an undefined variable is left out. */
  spawn(
    id: string,
    extra: Record<string, string | undefined> = {},
    config: Record<string, unknown> = {},
  ): BrokerNode {
    const configFile = join(this.configDir, `${id}.json`);
    writeFileSync(
      configFile,
      JSON.stringify({
        ...DEFAULT_CONFIG,
        mqtt: { sysIntervalSec: 0 },
        shutdown: { drainTimeoutMs: 1000 },
        ...this.options.config,
        ...config,
        cluster: {
          ...(this.options.config?.['cluster'] as Record<string, unknown> | undefined),
          name: this.name,
          heartbeatMs: 250,
          nodeTimeoutMs: 1500,
          requestTimeoutMs: 1500,
          mqttAckWaitMs: 2000,
        },
      }),
    );
    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'] ?? '',
      CONFIG: configFile,
      HOST: '127.0.0.1',
      PORT: '0',
      NODE_ID: id,
      NATS_URL: this.nats.url,
      DATABASE_URL: this.schema.url,
      ...extra,
    };
    const child = spawn(process.execPath, [MAIN], {
      env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new BrokerNode(id, child);
  }

  /** Every running node counts every running node live (its broker_cluster_nodes metric). */
  async assertFullMembership(): Promise<void> {
    const running = this.nodes.filter((node) => node.alive);
    for (const node of running) {
      const metrics = await (await fetch(`${node.http}/metrics`)).text();
      if (!new RegExp(`^broker_cluster_nodes ${running.length}$`, 'm').test(metrics)) {
        throw new Error(
          `${node.id} does not see every node: ${/^broker_cluster_nodes.*$/m.exec(metrics)?.[0]}`,
        );
      }
    }
  }

  node(id: string): BrokerNode {
    const node = this.nodes.find((n) => n.id === id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return node;
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.kill()));
    await this.nats.close();
    await this.schema.drop();
    rmSync(this.configDir, { recursive: true, force: true });
  }
}

export { until };

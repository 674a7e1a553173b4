import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KvWatchInclude, Kvm } from '@nats-io/kv';
import { connect as natsConnect } from '@nats-io/transport-node';
import { DEFAULT_CONFIG } from '../../src/default-config.js';
import { BlackholeProxy } from './blackhole-proxy.js';
import { accepts, freePort } from './free-port.js';
import { createTestSchema, type TestSchema } from './postgres.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** The version of the nats-server the tests run (`NATS_SERVER_BIN`), as [major, minor, patch]. */
export function natsServerVersion(): [number, number, number] {
  const printed = execFileSync(NATS_SERVER, ['--version'], { encoding: 'utf8' });
  const [major = 0, minor = 0, patch = 0] = (/v(\d+)\.(\d+)\.(\d+)/.exec(printed) ?? []).slice(1).map(Number);
  return [major, minor, patch];
}
const START_TIMEOUT_MS = 15_000;
/** The test clusters' cluster.nodeTimeoutMs: a node silent this long is dead to the others. */
export const TEST_NODE_TIMEOUT_MS = 1500;
/** The test clusters' cluster.heartbeatMs: how often a node renews its heartbeat and judges the others. */
export const TEST_HEARTBEAT_MS = 250;

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const timedOut = (): Error => new Error(`timed out waiting until ${what}`);
  for (;;) {
    // A check that never settles (a publish nobody answers) fails the wait too, rather than hang it.
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut()), Math.max(0, deadline - Date.now()));
    });
    const done = await Promise.race([Promise.resolve(check()), expired]).finally(() => clearTimeout(timer));
    if (done) return;
    if (Date.now() > deadline) throw timedOut();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One nats-server process of a TestNats. */
interface NatsServer {
  readonly port: number;
  /** Its route port when the servers form a cluster. */
  readonly routePort: number | null;
  readonly dir: string;
  child: ChildProcess | null;
}

/**
 * The NATS of a test, with JetStream: one nats-server on a free port, or several routed into one NATS
 * cluster (JetStream replicas across them), that the test may kill and start again, each or all.
 */
/** JetStream settings of a test's nats-server; none given: the server's defaults. */
interface JetStreamSettings {
  /** Bytes JetStream may keep on disk. */
  readonly maxFileStore?: number;
  /** Each write synced to disk before it is acknowledged (`sync_interval: always`, nats-server 2.10+). */
  readonly syncAlways?: boolean;
}

export class TestNats {
  private constructor(
    private readonly servers: readonly NatsServer[],
    private readonly jetStream: JetStreamSettings,
  ) {}

  static async start(options: JetStreamSettings & { servers?: number } = {}): Promise<TestNats> {
    const count = options.servers ?? 1;
    const servers: NatsServer[] = [];
    for (let i = 0; i < count; i++) {
      servers.push({
        port: await freePort(),
        routePort: count > 1 ? await freePort() : null,
        dir: mkdtempSync(join(tmpdir(), 'broker-nats-')),
        child: null,
      });
    }
    const nats = new TestNats(servers, options);
    await nats.restart();
    return nats;
  }

  /** The first server's client URL. */
  get url(): string {
    return this.urls[0] as string;
  }

  /** Every server's client URL, as NATS_URL lists them. */
  get urls(): string[] {
    return this.servers.map((server) => `nats://127.0.0.1:${server.port}`);
  }

  /**
   * Starts every server (again, on the same ports and store directories; `wipe` empties the directories
   * first, as servers on new machines would start) and waits until they answer.
   */
  async restart(wipe = false): Promise<void> {
    if (this.servers.some((server) => server.child !== null)) throw new Error('nats-server is running');
    await Promise.all(this.servers.map((_, i) => this.startServer(i, wipe)));
    // JetStream answers a moment after the port opens (a cluster's after electing its leader).
    await new Promise((resolve) => setTimeout(resolve, this.servers.length > 1 ? 2000 : 200));
  }

  /** Starts server `index` (of a cluster) again after `kill`. */
  async revive(index: number): Promise<void> {
    await this.startServer(index, false);
  }

  /** Kills server `index` at once (SIGKILL, or SIGTERM: a clean shutdown), waiting for the exit. */
  async kill(index: number, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const server = this.servers[index] as NatsServer;
    const child = server.child;
    if (child === null) return;
    server.child = null;
    if (child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  /**
   * Stops every server at once (SIGKILL: no goodbye to the clients, and what JetStream had not flushed is
   * gone; SIGTERM: the shutdown an operator's restart does), waiting for the exits.
   */
  async stop(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    await Promise.all(this.servers.map((_, i) => this.kill(i, signal)));
  }

  /**
   * What a killed nats-server may do to a stream (nats-io/nats-server#5412, #6124): forget writes it had
   * acknowledged while its consumers remember delivering them. The server (one) stops, the stream's
   * messages as they are now are kept aside, `meanwhile` runs with the server back, and then it stops
   * again and starts with the messages as kept and the consumers' state as it became.
   */
  async rollBackStream(stream: string, meanwhile: () => Promise<void>): Promise<void> {
    const server = this.servers[0] as NatsServer;
    if (this.servers.length !== 1) throw new Error('a stream is rolled back on one nats-server');
    const messages = join(server.dir, 'jetstream', '$G', 'streams', stream, 'msgs');
    const kept = `${messages}.kept`;
    await this.stop('SIGTERM');
    cpSync(messages, kept, { recursive: true });
    await this.restart();
    await meanwhile();
    await this.stop('SIGTERM');
    rmSync(messages, { recursive: true, force: true });
    cpSync(kept, messages, { recursive: true });
    rmSync(kept, { recursive: true, force: true });
    await this.restart();
  }

  async close(): Promise<void> {
    await this.stop();
    for (const server of this.servers) rmSync(server.dir, { recursive: true, force: true });
  }

  private async startServer(index: number, wipe: boolean): Promise<void> {
    const server = this.servers[index] as NatsServer;
    if (wipe) {
      rmSync(server.dir, { recursive: true, force: true });
      mkdirSync(server.dir, { recursive: true });
    }
    const args = ['-a', '127.0.0.1', '-p', String(server.port), '-js', '-sd', server.dir];
    if (server.routePort !== null) {
      const routes = this.servers
        .filter((other) => other !== server)
        .map((other) => `nats://127.0.0.1:${other.routePort}`);
      args.push('-n', `s${index}`, '--cluster_name', 'test');
      args.push('--cluster', `nats://127.0.0.1:${server.routePort}`, '--routes', routes.join(','));
    }
    const { maxFileStore, syncAlways } = this.jetStream;
    const settings = [
      ...(maxFileStore === undefined ? [] : [`max_file_store: ${maxFileStore}`]),
      ...(syncAlways === true ? ['sync_interval: always'] : []),
    ];
    if (settings.length > 0) {
      const config = join(server.dir, 'nats.conf');
      writeFileSync(config, `jetstream { ${settings.join(', ')} }\n`);
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
    server.child = child;
    await Promise.race([
      failed,
      until(`nats-server answers on ${server.port} (${output})`, () => accepts(server.port), 10_000),
    ]);
  }
}

/** One broker process of a test cluster: the real `npm start` entry point with its own node id. */
export class BrokerNode {
  private output = '';
  private exited: Promise<number | null>;
  /** Whether the test ended the process (kill or stop): any other exit is the broker's own. */
  private ended = false;
  port = 0;
  /** Its way to NATS, in a `proxied` cluster. */
  proxy: BlackholeProxy | null = null;

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

  /** How the process ended when the test did not end it (a crash, an exit of its own), or null. */
  get unexpectedExit(): string | null {
    if (this.alive || this.ended) return null;
    return `exited with ${this.child.exitCode ?? this.child.signalCode}`;
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
    this.ended = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /**
   * SIGSTOP: the process stops where it is (a GC pause, a stalled VM, a partition seen from outside); its
   * sockets stay open and their data waits in the kernel.
   */
  pause(): void {
    if (this.alive) this.child.kill('SIGSTOP');
  }

  /**
   * Cuts the node off from NATS (a partition): its path to NATS drops every byte, its clients stay
   * connected to it. Needs a cluster started with `proxied`.
   */
  cut(): void {
    if (this.proxy === null) throw new Error(`node ${this.id} does not reach NATS through a proxy`);
    this.proxy.blackhole();
  }

  /** Cuts the node off from NATS right after it sends bytes containing `marker` (a subject, say). */
  cutAfterSending(marker: string): void {
    if (this.proxy === null) throw new Error(`node ${this.id} does not reach NATS through a proxy`);
    this.proxy.blackholeAfterSending(marker);
  }

  /** Ends `cut`: the node's NATS client finds its connection closed and connects again. */
  heal(): void {
    this.proxy?.heal();
  }

  /** SIGCONT after `pause`: the process goes on from where it stopped. */
  resume(): void {
    if (this.alive) this.child.kill('SIGCONT');
  }

  /** SIGTERM: the node drains and leaves the cluster. */
  async stop(): Promise<number | null> {
    this.ended = true;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      // A paused node would keep the signal pending.
      this.child.kill('SIGCONT');
    }
    return this.exited;
  }
}

export interface ClusterOptions {
  /** Extra configuration merged over the default endpoints and the test cluster's settings. */
  readonly config?: Record<string, unknown>;
  /** Bytes the test's nats-server may keep on disk for JetStream. */
  readonly maxFileStore?: number;
  /** nats-servers routed into one NATS cluster (1: a single server). */
  readonly natsServers?: number;
  /** The nats-servers sync each JetStream write before acknowledging it. */
  readonly natsSyncAlways?: boolean;
  /** Each node reaches the (first) nats-server through a proxy of its own, which `cut` blackholes. */
  readonly proxied?: boolean;
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
    const nats = await TestNats.start({
      ...(options.maxFileStore === undefined ? {} : { maxFileStore: options.maxFileStore }),
      ...(options.natsServers === undefined ? {} : { servers: options.natsServers }),
      ...(options.natsSyncAlways === true ? { syncAlways: true } : {}),
    });
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
    const proxy = this.options.proxied === true ? await BlackholeProxy.start(this.natsPort()) : null;
    const node = this.spawn(id, proxy === null ? extra : { ...extra, NATS_URL: proxy.url }, config);
    node.proxy = proxy;
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
    const given = { ...this.options.config, ...config };
    const mqtt = given['mqtt'] as Record<string, unknown> | undefined;
    writeFileSync(
      configFile,
      JSON.stringify({
        ...DEFAULT_CONFIG,
        shutdown: { drainTimeoutMs: 1000 },
        ...given,
        mqtt: {
          sysIntervalSec: 0,
          ...mqtt,
          cluster: { ackWaitMs: 2000, ...(mqtt?.['cluster'] as Record<string, unknown> | undefined) },
        },
        cluster: {
          heartbeatMs: TEST_HEARTBEAT_MS,
          nodeTimeoutMs: TEST_NODE_TIMEOUT_MS,
          requestTimeoutMs: 1500,
          ...(this.options.config?.['cluster'] as Record<string, unknown> | undefined),
          name: this.name,
        },
      }),
    );
    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'] ?? '',
      CONFIG: configFile,
      HOST: '127.0.0.1',
      PORT: '0',
      NODE_ID: id,
      NATS_URL: this.nats.urls.join(','),
      DATABASE_URL: this.schema.url,
      ...extra,
    };
    const child = spawn(process.execPath, [MAIN], {
      env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new BrokerNode(id, child);
  }

  /** The nodes' warnings and errors, last `count` of them, for a failing test to show (routine ones left out). */
  warnings(count = 20): string {
    const routine = new Set(['mqtt message not stored', 'mqtt connect refused']);
    return this.nodes
      .flatMap((node) =>
        node
          .logLines()
          .filter((line) => Number(line['level']) >= 40 && !routine.has(String(line['msg'])))
          .map((line) => `${node.id}: ${String(line['msg'])} ${String(line['err'] ?? '')}`),
      )
      .slice(-count)
      .join('\n');
  }

  /** Waits until every running node counts every running node live (after a cut healed, say). */
  untilFullMembership(timeoutMs = 15_000): Promise<void> {
    return until(
      'every node sees the others again',
      () =>
        this.assertFullMembership().then(
          () => true,
          () => false,
        ),
      timeoutMs,
    );
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

  /**
   * Waits until every running node has renewed its heartbeat (in the cluster's nodes bucket, which must be
   * there: a node that lost it makes it again) enough times from now on to have judged the others past
   * TEST_NODE_TIMEOUT_MS by its own ticks: a node that was not seeing another's beats has declared it
   * dead by then, which assertFullMembership tells. Fails when the bucket or a node's beats do not come.
   */
  async untilPastNodeTimeout(timeoutMs = 15_000): Promise<void> {
    // The judging tick that renews a beat: the last of these runs more than a node timeout after the first.
    const beats = Math.ceil(TEST_NODE_TIMEOUT_MS / TEST_HEARTBEAT_MS) + 2;
    const running = this.nodes.filter((node) => node.alive);
    const counts = new Map<string, number>();
    const nc = await natsConnect({ servers: this.nats.urls });
    let stop = (): void => undefined;
    try {
      await until(
        `the ${this.name}-nodes bucket is there`,
        async () => {
          try {
            const kv = await new Kvm(nc).open(`${this.name}-nodes`);
            const watcher = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
            stop = () => watcher.stop();
            void (async () => {
              for await (const entry of watcher) {
                if (entry.operation === 'PUT') counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
              }
            })();
            return true;
          } catch {
            return false;
          }
        },
        timeoutMs,
      );
      await until(
        `every node renewed its heartbeat ${beats} times`,
        () => running.every((node) => (counts.get(node.id) ?? 0) >= beats),
        timeoutMs,
      ).catch((err: Error) => {
        const seen = running.map((node) => `${node.id}: ${counts.get(node.id) ?? 0}`).join(', ');
        throw new Error(`${err.message} (${seen})`);
      });
    } finally {
      stop();
      await nc.close();
    }
  }

  node(id: string): BrokerNode {
    const node = this.nodes.find((n) => n.id === id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return node;
  }

  private natsPort(): number {
    return Number(new URL(this.nats.url).port);
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.kill()));
    await Promise.all(this.nodes.map((node) => node.proxy?.close()));
    await this.nats.close();
    await this.schema.drop();
    rmSync(this.configDir, { recursive: true, force: true });
  }
}

export { until };

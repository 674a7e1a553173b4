import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const PROFILED_STOP_TIMEOUT_MS = 60_000;
const STDERR_TAIL_CHARS = 4_000;

export interface ServerProcess {
  readonly name: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let killing = false;

/** A benchmark that dies half-way (error, Ctrl-C) must not leave servers holding ports and CPU. */
export function killChildrenOnExit(): void {
  // Once per process, however many servers a benchmark starts.
  if (killing) return;
  killing = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/** A port that was free a moment ago on loopback (the child binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** A reference server script of this package, in its own process, told a free port by PORT. */
export async function startScriptServer(name: string, script: URL): Promise<ServerProcess> {
  const port = await freePort();
  return startNodeServer(name, fileURLToPath(script), { PORT: String(port) }, port);
}

export function startBareServer(): Promise<ServerProcess> {
  return startScriptServer('bare ws', new URL('./bare-ws-server.js', import.meta.url));
}

/**
 * The broker's own entry point, configured by file (plus `env`: a cluster node's NATS_URL, say); info
 * logging stays on, written to /dev/null.
 */
export async function startBrokerServer(
  configFile: string,
  port: number,
  env: Record<string, string> = {},
  name = 'broker',
): Promise<ServerProcess> {
  const script = fileURLToPath(new URL('../../../src/main.js', import.meta.url));
  // BENCH_CPU_PROF=<dir>: each broker writes a V8 CPU profile there when it exits (Node refuses
  // --cpu-prof in NODE_OPTIONS, and would profile the load side too).
  const profileDir = process.env['BENCH_CPU_PROF'];
  const nodeArgs = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  return spawnServer(
    name,
    process.execPath,
    [...nodeArgs, script],
    { CONFIG: configFile, LOG_LEVEL: 'info', ...env },
    port,
  );
}

/** A process of the load side, with an IPC channel, killed with the servers on exit. */
export function forkLoadProcess(script: URL, args: readonly string[]): ChildProcess {
  const child = fork(fileURLToPath(script), [...args], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** A Node script as a server process, ready once `port` accepts connections. */
export function startNodeServer(
  name: string,
  script: string,
  env: Record<string, string>,
  port: number,
): Promise<ServerProcess> {
  return spawnServer(name, process.execPath, [script], env, port);
}

/** Any program as a server process (a reference broker, say), ready once `port` accepts connections. */
export async function spawnServer(
  name: string,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  port: number,
): Promise<ServerProcess> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    // stdout is the per-handshake log: the child still formats and writes every line, to /dev/null.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL_CHARS);
  });
  child.on('error', (err) => {
    stderr += `\n${err.message}`;
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );

  try {
    await waitForPort(port, child);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${name} did not start: ${(err as Error).message}\n${stderr}`);
  }
  return {
    name,
    port,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      // A profiled process writes its profile as it exits: given time to, not killed first.
      const graceMs =
        process.env['BENCH_CPU_PROF'] === undefined ? STOP_TIMEOUT_MS : PROFILED_STOP_TIMEOUT_MS;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    }
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`port ${port} not open after ${READY_TIMEOUT_MS} ms`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A load process's next IPC message; rejects when it exits first, or (with a finite `timeoutMs`) says
 * nothing in time. `name` and `what` word the errors: "<name> exited (1) before <what>".
 */
export function nextMessage<T>(
  child: ChildProcess,
  name: string,
  what: string,
  timeoutMs: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      done();
      resolve(message as T);
    };
    const onExit = (code: number | null): void => {
      done();
      reject(new Error(`${name} exited (${String(code)}) before ${what}`));
    };
    const timer = Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          done();
          reject(new Error(`${name}: nothing ${what} within ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

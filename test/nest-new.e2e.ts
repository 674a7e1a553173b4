import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { freePort } from './support/free-port.js';
import { until } from './support/cluster.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The Nest CLI that generates the application, pinned: a new release may change the template. */
const NEST_CLI = '@nestjs/cli@12.0.8';

/** The generated application's own test run must not report to this runner. */
const env = { ...process.env };
delete env['NODE_TEST_CONTEXT'];

async function step(command: string, args: readonly string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
    return stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    assert.fail(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/** The `ts` blocks of a Markdown file, in order. */
async function tsBlocks(file: string): Promise<string[]> {
  const text = await readFile(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

/** The `npm install` line of docs/library.md's install block, as arguments, the tarball put in. */
async function installLine(tarball: string): Promise<string[]> {
  const text = await readFile(join(ROOT, 'docs/library.md'), 'utf8');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(text)?.[1] ?? '';
  const line = block
    .replaceAll('\\\n', ' ')
    .split('\n')
    .find((l) => l.startsWith('npm install'));
  assert.ok(line, 'docs/library.md has an npm install line');
  const words = line.replace(/#.*$/, '').trim().split(/\s+/).slice(2);
  return words.map((word) => (word.endsWith('.tgz') ? tarball : word));
}

/** Starts `main` (built) on a free port and connects MQTT over WebSocket to /mqtt: CONNECT gets CONNACK. */
async function servesMqtt(app: string, main: string): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    cwd: app,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  try {
    let connack: number[] = [];
    await until(
      `${main} answers MQTT on /mqtt`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${main} exited ${child.exitCode}:\n${output}`);
        const ws = new WebSocket(`ws://127.0.0.1:${port}/mqtt`, 'mqtt');
        const opened = await new Promise<boolean>((resolve) => {
          ws.once('open', () => resolve(true));
          ws.once('error', () => resolve(false));
        });
        if (!opened) return false;
        // MQTT 3.1.1 CONNECT: client id "new", clean session, keep-alive 0.
        ws.send(Buffer.from([0x10, 15, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0x02, 0, 0, 0, 3, 0x6e, 0x65, 0x77]));
        const answer = await new Promise<Buffer>((resolve) =>
          ws.once('message', (data: Buffer) => resolve(data)),
        );
        ws.close();
        connack = [...answer];
        return true;
      },
      30_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${output}`));
    assert.deepEqual(connack, [0x20, 2, 0, 0]);
  } finally {
    child.kill('SIGTERM');
  }
}

it(
  'an application from nest new, with the packed tarball installed by the docs install line and the README and docs library snippets (and the docs gateway) as its sources, builds with nest build and serves MQTT',
  { timeout: 900_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'broker-nest-new-'));
    try {
      await step('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
      const tarball = (await readdir(dir)).find((name) => name.endsWith('.tgz'));
      assert.ok(tarball, 'npm pack wrote no tarball');
      await step(
        'npx',
        ['-y', NEST_CLI, 'new', 'app', '--skip-git', '--package-manager', 'npm', '--strict'],
        dir,
      );
      const app = join(dir, 'app');
      await step(
        'npm',
        ['install', '--no-audit', '--no-fund', ...(await installLine(join(dir, tarball)))],
        app,
      );

      // docs/library.md: the forRootAsync module and its main.ts, as the application's own two files.
      const [appModule, main] = await tsBlocks('docs/library.md');
      if (appModule === undefined || main === undefined) assert.fail('docs/library.md has two ts blocks');
      assert.ok(appModule.startsWith('// src/app.module.ts') && main.startsWith('// src/main.ts'));
      await writeFile(join(app, 'src/app.module.ts'), appModule);
      await writeFile(join(app, 'src/main.ts'), main);
      // The README's library snippet: a whole main of its own.
      const readme = (await tsBlocks('README.md'))[0];
      if (readme === undefined) assert.fail('the README has a ts block');
      assert.ok(readme.includes('BrokerModule.forRoot('), 'the README has its library snippet');
      await writeFile(join(app, 'src/readme-main.ts'), readme);
      // docs/modules.md's gateway (guard, pipe, DTO): it compiles in the application as written.
      const gateway = (await tsBlocks('docs/modules.md')).find((code) =>
        code.startsWith('// src/rooms.gateway.ts'),
      );
      if (gateway === undefined) assert.fail('docs/modules.md has the gateway as a whole file');
      await writeFile(join(app, 'src/rooms.gateway.ts'), gateway);

      await step('npx', ['nest', 'build'], app);
      await servesMqtt(app, 'dist/main.js');
      await servesMqtt(app, 'dist/readme-main.js');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

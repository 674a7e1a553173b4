import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The application's own test run reports to its own stdout, not to this runner's. */
const env = { ...process.env };
delete env['NODE_TEST_CONTEXT'];

/** Runs a command, failing with its output when it fails. */
async function step(command: string, args: readonly string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 240_000,
    });
    return stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    assert.fail(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/**
 * Packs the package as it would be published (dist is built by `npm test` before the suites run),
 * installs the tarball into a copy of `example`, builds it and runs its own tests.
 */
async function installBuildAndTest(example: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'broker-package-'));
  try {
    await step('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
    const tarball = (await readdir(dir)).find((name) => name.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote no tarball');
    const app = join(dir, 'app');
    await cp(join(ROOT, example), app, {
      recursive: true,
      filter: (source) => !/[/\\](node_modules|dist)$/.test(source),
    });
    await step('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball)], app);
    // One copy of Nest: the package's @nestjs/* are peers, resolved to the application's own.
    const tree = await step('npm', ['ls', '@nestjs/core', '--all', '--parseable'], app);
    assert.equal(tree.trim().split('\n').length, 1, tree);
    await step('npm', ['run', 'build'], app);
    const tests = await step('npm', ['test'], app);
    assert.match(tests, /# fail 0/);
    assert.doesNotMatch(tests, /# pass 0\b/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

it(
  'a Nest application outside the package (examples/nest-app) installs the packed tarball, builds, and passes its own tests',
  { timeout: 480_000 },
  () => installBuildAndTest('examples/nest-app'),
);

it(
  'an existing CommonJS Nest application (examples/nest-app-cjs: module commonjs, moduleResolution node) resolves the types of the root and a subpath, requires the ESM package, and serves MQTT',
  { timeout: 480_000 },
  () => installBuildAndTest('examples/nest-app-cjs'),
);

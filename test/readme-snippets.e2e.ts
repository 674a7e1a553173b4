import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';

/** The repository's root, from dist/test. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How long one snippet may run before it counts as hanging (each is meant to exit on its own). */
const SNIPPET_TIMEOUT_MS = 20_000;

/** The README's JavaScript blocks, in order, each with the line of its first row. */
function snippets(): { code: string; line: number }[] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const found: { code: string; line: number }[] = [];
  for (const match of text.matchAll(/^```js\n([\s\S]*?)^```$/gm)) {
    found.push({ code: match[1] as string, line: text.slice(0, match.index).split('\n').length + 1 });
  }
  return found;
}

/** What a `console.log(...); // shown` line says it prints, where the comment gives it whole (no "..."). */
function promised(code: string): string[] {
  return [...code.matchAll(/console\.log\(.*\/\/ (.+)$/gm)]
    .map((match) => (match[1] as string).trim())
    .filter((shown) => !shown.includes('...'));
}

function run(file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), SNIPPET_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/**
 * Every JavaScript snippet of the README, run as a reader would paste it: against the broker exactly as
 * `npm start` composes it (its port instead of 8080), with the packages the README names. Each must
 * exit 0 on its own and print what its comments say.
 */
describe('README snippets', () => {
  let broker: TestBroker;
  const dir = join(ROOT, 'dist', 'test', 'readme-snippets');

  before(async () => {
    broker = await startDefaultBroker();
    mkdirSync(dir, { recursive: true });
  });
  after(() => broker?.close());

  it('the README has one snippet per protocol', () => {
    const all = snippets().map((s) => s.code);
    for (const path of ['/mqtt', '/graphql', '/ws', '/ocpp', '/chat'])
      assert.ok(
        all.some((code) => code.includes(`localhost:8080${path}`)),
        `a snippet connects to ${path}`,
      );
  });

  for (const { code, line } of snippets()) {
    it(`the snippet at README.md:${line} runs and prints what it says`, async () => {
      const file = join(dir, `line-${line}.mjs`);
      // Under the repository, so that its imports resolve to the packages installed here.
      writeFileSync(file, code.replaceAll('localhost:8080', `127.0.0.1:${broker.port}`));
      const { code: exit, out } = await run(file);
      assert.equal(exit, 0, `exit code ${String(exit)}; output:\n${out}`);
      assert.ok(out.trim().length > 0, 'it printed something');
      for (const shown of promised(code))
        assert.ok(out.includes(shown), `it printed ${shown}; output:\n${out}`);
    });
  }
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig, parseConfig } from '#broker/config';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_CONFIG } from '../src/default-config.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';

/** The repository's root, from dist/test. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How long one snippet may run before it counts as hanging (each is meant to exit on its own). */
const SNIPPET_TIMEOUT_MS = 20_000;

/** The line before a JavaScript block that cannot run on its own here, with why (a browser page, say). */
const NOT_RUN = '<!-- not run: ';

/** A JavaScript block of the README or docs/: where it is, and why it is not run, if it is not. */
interface Snippet {
  readonly code: string;
  readonly where: string;
  readonly notRun: string | null;
}

/** The JavaScript blocks of the README and docs/, in order. */
function snippets(): Snippet[] {
  const found: Snippet[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/^```js\n([\s\S]*?)^```$/gm)) {
      const before = text.slice(0, match.index).trimEnd();
      const marker = before.slice(before.lastIndexOf('\n') + 1);
      found.push({
        code: match[1] as string,
        where: `${file}:${text.slice(0, match.index).split('\n').length + 1}`,
        notRun: marker.startsWith(NOT_RUN) ? marker.slice(NOT_RUN.length).replace(/\s*-->$/, '') : null,
      });
    }
  }
  return found;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** The line before a block that is a listing, not a config (the reference of every key, with placeholders). */
const NOT_A_CONFIG = '<!-- reference listing, not a config';

/** Every YAML block of the README and docs/ (those in list items too), dedented, with where it is. */
function configBlocks(): { code: string; where: string }[] {
  const found: { code: string; where: string }[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```$/gm)) {
      const before = text.slice(0, match.index).trimEnd();
      if (before.endsWith('-->') && before.slice(before.lastIndexOf('<!--')).startsWith(NOT_A_CONFIG))
        continue;
      const indent = (match[1] as string).length;
      const code = (match[2] as string)
        .split('\n')
        .map((line) => line.slice(indent))
        .join('\n');
      found.push({ code, where: `${file}:${text.slice(0, match.index).split('\n').length + 1}` });
    }
  }
  return found;
}

/** What a `console.log(...); // shown` line says it prints, where the comment gives it whole (no "..."). */
function promised(code: string): string[] {
  return [...code.matchAll(/console\.log\(.*\/\/ (.+)$/gm)]
    .map((match) => (match[1] as string).trim())
    .filter((shown) => !shown.includes('...'));
}

function run(file: string, flags: readonly string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...flags, file], { stdio: ['ignore', 'pipe', 'pipe'] });
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
 * Every JavaScript snippet of the README and docs/, run as a reader would paste it: against the broker
 * exactly as `npm start` composes it (its port instead of 8080), with the packages the README names. Each
 * must exit 0 on its own and print what its comments say. One marked `<!-- not run: why -->` (a browser
 * page, a device with its own certificate, a client that waits for others) is checked as JavaScript only.
 */
describe('README and docs snippets', () => {
  let broker: TestBroker;
  const dir = join(ROOT, 'dist', 'test', 'readme-snippets');

  before(async () => {
    broker = await startDefaultBroker();
    mkdirSync(dir, { recursive: true });
  });
  after(() => broker?.close());

  it('the README has one snippet per protocol', () => {
    const all = snippets()
      .filter((s) => s.where.startsWith('README.md'))
      .map((s) => s.code);
    for (const path of ['/mqtt', '/graphql', '/ws', '/ocpp', '/chat'])
      assert.ok(
        all.some((code) => code.includes(`localhost:8080${path}`)),
        `a snippet connects to ${path}`,
      );
  });

  for (const { code, where, notRun } of snippets()) {
    const file = join(dir, `${where.replaceAll(/[/:.]/g, '_')}.mjs`);
    if (notRun !== null) {
      it(`the snippet at ${where} (not run: ${notRun}) is valid JavaScript`, async () => {
        writeFileSync(file, code);
        const { code: exit, out } = await run(file, ['--check']);
        assert.equal(exit, 0, out);
      });
      continue;
    }
    it(`the snippet at ${where} runs and prints what it says`, async () => {
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

/**
 * Every config block of the README and docs/, saved as a CONFIG file and loaded as `npm start` loads
 * one (over the defaults, validated): a block that would stop the broker fails here.
 */
describe('docs config blocks', () => {
  const dir = join(ROOT, 'dist', 'test', 'docs-configs');

  before(() => mkdirSync(dir, { recursive: true }));

  it('the docs hold config blocks to check', () => assert.ok(configBlocks().length >= 5));

  for (const { code, where } of configBlocks()) {
    it(`the config at ${where} is valid as a CONFIG file`, () => {
      const file = join(dir, `${where.replaceAll(/[/:.]/g, '_')}.yaml`);
      writeFileSync(file, code);
      assert.doesNotThrow(() => loadConfig({ env: { CONFIG: file }, defaults: DEFAULT_CONFIG }), where);
    });
  }
});

/** Every leaf of a mapping as a dotted path and its value (a list is a leaf). */
function leaves(value: unknown, prefix = ''): [string, unknown][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [[prefix, value]];
  const entries = Object.entries(value);
  if (entries.length === 0 && prefix !== '') return [[prefix, value]];
  return entries.flatMap(([key, inner]) => leaves(inner, prefix === '' ? key : `${prefix}.${key}`));
}

function at(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((inner, key) => (inner as Record<string, unknown> | undefined)?.[key], value);
}

/**
 * docs/configuration.md's reference listing is written by hand: it must not drift from the schema. Every
 * key the schema fills in (with every optional section given its required keys) is listed, with the
 * schema's default; a listed value with "..." is a placeholder for a value of yours.
 */
describe('docs configuration reference', () => {
  it('lists every key the schema fills in, each with its default', () => {
    const text = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const block = /^```yaml\n([\s\S]*?)^```$/m.exec(text.slice(text.indexOf(NOT_A_CONFIG)))?.[1];
    assert.ok(block !== undefined, 'docs/configuration.md has its reference listing');
    const listing: unknown = parseYaml(block);
    const filled = parseConfig({
      endpoints: [{ path: '/x', subprotocols: ['chat.v1'] }],
      jwt: { secret: 'x'.repeat(32) },
      introspection: { url: 'https://idp.example/introspect', clientId: 'broker', clientSecret: 'secret' },
      store: { databaseUrl: 'postgres://db.example/broker' },
      cluster: { natsUrl: ['nats://127.0.0.1:4222'] },
    });
    const checked = leaves({ ...filled, endpoints: {} }).filter(([path]) => !path.startsWith('endpoints'));
    assert.ok(checked.length > 50, `${checked.length} keys checked`);
    const drift: string[] = [];
    for (const [path, value] of checked) {
      const listed = at(listing, path);
      if (listed === undefined)
        drift.push(`${path}: not listed (the schema's default is ${JSON.stringify(value)})`);
      else if (typeof listed === 'string' && listed.includes('...')) continue;
      else if (JSON.stringify(listed) !== JSON.stringify(value))
        drift.push(
          `${path}: listed as ${JSON.stringify(listed)}, the schema's default is ${JSON.stringify(value)}`,
        );
    }
    assert.deepEqual(drift, []);
  });
});

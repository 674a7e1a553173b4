/**
 * The sans-IO protocol cores and the kit load in a process with no Nest, no `ws` and no NATS client:
 * a Node loader hook refuses those packages, and a child process imports each core's entry files from
 * dist/ (issue 40: a protocol core imports the kit alone, never the gateway's Nest).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The packages a core must not load, as the loader hook sees their specifiers. */
const REFUSED = String.raw`^(@nestjs/|ws$|@nats-io/|nats$)`;

const HOOKS = `export async function resolve(specifier, context, next) {
  if (new RegExp(${JSON.stringify(REFUSED)}).test(specifier))
    throw new Error('loaded ' + specifier + ' from ' + context.parentURL);
  return next(specifier, context);
}`;

const REGISTER = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}));`;

/** Imports `files` (under dist/) in a child process that refuses Nest, ws and NATS; its stderr on failure. */
function loadAlone(files: readonly string[]): { status: number | null; stderr: string } {
  const body = files.map((file) => `await import(${JSON.stringify(join(DIST, file))});`).join('\n');
  const child = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '--input-type=module', '-e', body],
    { cwd: join(DIST, '..'), encoding: 'utf8', timeout: 30_000 },
  );
  return { status: child.status, stderr: child.stderr };
}

describe('protocol cores without Nest, ws or NATS', () => {
  const cores: Record<string, readonly string[]> = {
    kit: ['libs/kit/src/index.js'],
    mqtt: [
      'libs/protocols/mqtt/src/mqtt-broker.js',
      'libs/protocols/mqtt/src/mqtt-client.js',
      'libs/protocols/mqtt/src/handlers/dispatch.js',
    ],
    wamp: ['libs/protocols/wamp/src/router.js', 'libs/protocols/wamp/src/session-protocol.js'],
    ocpp: ['libs/protocols/ocpp16/src/ocpp-session.js', 'libs/protocols/ocpp16/src/central-system.js'],
    'legacy graphql-ws': ['libs/protocols/graphql/src/legacy-session.js'],
  };
  for (const [name, files] of Object.entries(cores)) {
    it(`${name} loads alone`, () => {
      const { status, stderr } = loadAlone(files);
      assert.equal(status, 0, stderr);
    });
  }

  it('the check refuses what loads Nest: the gateway', () => {
    const { status, stderr } = loadAlone(['libs/gateway/src/index.js']);
    assert.notEqual(status, 0);
    assert.match(stderr, /loaded @nestjs\//);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { Module } from '@nestjs/common';
import { Subprotocol } from '#broker/gateway';
import { startTestBroker } from './support/test-broker.js';
import { EchoSubprotocol, TestModulesModule } from './support/test-modules.js';

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));

/** Runs the real broker entry point with the given environment; resolves on exit or on "listening". */
function runBroker(
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main, ...args], {
      env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let signalled = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (!signalled && output.includes('broker listening')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function configFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'broker-config-'));
  const path = join(dir, 'broker.yaml');
  writeFileSync(path, content);
  return path;
}

describe('boot', () => {
  it('npm start with no configuration listens with the defaults and exits 0 on SIGTERM', async () => {
    const { code, output } = await runBroker({});
    assert.match(output, /broker listening/);
    assert.match(output, /draining connections/);
    assert.equal(code, 0);
    assert.doesNotMatch(output, /Mapped \{|dependencies initialized/, "Nest's boot narration is at debug");
    const listening = JSON.parse(output.split('\n').find((l) => l.includes('broker listening')) ?? '{}') as {
      endpoints?: string[];
      store?: string;
    };
    assert.ok(
      listening.endpoints?.includes('/mqtt (mqtt, mqttv3.1)'),
      'the start-up line lists the endpoints',
    );
    assert.match(String(listening.store), /^sqlite /);
    assert.match(output, /"msg":"broker stopped"/);
    assert.match((await runBroker({ LOG_LEVEL: 'debug' })).output, /Mapped \{/);
  });

  it('an invalid config exits non-zero before listening, naming the bad key', async () => {
    const path = configFile('port: 8080\nendpoints:\n  - path: chat\n    subprotocols: []\n');
    const { code, output } = await runBroker({ CONFIG: path });
    assert.notEqual(code, 0);
    assert.match(output, /endpoints\.0\.path: must start with \//);
    assert.match(output, /endpoints\.0\.subprotocols/);
    assert.doesNotMatch(output, /broker listening/);
  });

  it('an unknown key is refused by name', async () => {
    const { code, output } = await runBroker({
      CONFIG: configFile('prot: 1\nendpoints: [{path: /a, subprotocols: [chat.v1]}]\n'),
    });
    assert.notEqual(code, 0);
    assert.match(output, /prot/);
  });

  it('a config file with one key changed keeps every default endpoint; --print-config shows the result without secrets', async () => {
    const secret = 'a-jwt-secret-that-is-long-enough-0123456789';
    const { code, output } = await runBroker(
      {
        CONFIG: configFile('mqtt: { tcpPort: 0 }\nendpoints: [{ path: /ws, enabled: false }]\n'),
        JWT_SECRET: secret,
      },
      ['--print-config'],
    );
    assert.equal(code, 0, output);
    const printed = parseYaml(output) as { endpoints: { path: string }[]; mqtt: { tcpPort: number } };
    assert.deepEqual(
      printed.endpoints.map((e) => e.path),
      ['/chat', '/mqtt', '/graphql', '/ocpp/:chargePointId'],
      'the defaults stay, but for the one the file turned off',
    );
    assert.equal(printed.mqtt.tcpPort, 0);
    assert.doesNotMatch(output, new RegExp(secret));
    assert.doesNotMatch(output, /broker listening/, 'it prints and exits, without serving');
  });

  it('a bad environment override is refused by name', async () => {
    const { code, output } = await runBroker({ PORT: 'eighty' });
    assert.notEqual(code, 0);
    assert.match(output, /PORT: expected an integer/);
  });

  it('a short JWT_SECRET is refused, and the secret is not printed', async () => {
    const { code, output } = await runBroker({ JWT_SECRET: 'tooshort-secret' });
    assert.notEqual(code, 0);
    assert.match(output, /jwt\.secret: must be at least 32 characters/);
    assert.doesNotMatch(output, /tooshort-secret/);
  });

  it('an endpoint naming an unknown module stops the boot', async () => {
    const path = configFile('endpoints: [{path: /m, subprotocols: [no-such-module.v1]}]\n');
    const { code, output } = await runBroker({ CONFIG: path });
    assert.notEqual(code, 0);
    assert.match(output, /endpoints\.0\.subprotocols: no module is registered for 'no-such-module\.v1'/);
  });

  it('two modules with one name stop the boot', async () => {
    @Subprotocol({ name: 'echo.v1', onUnsupported: 'omit' })
    class AnotherEcho extends EchoSubprotocol {}
    @Module({ imports: [TestModulesModule], providers: [AnotherEcho] })
    class Duplicate {}
    await assert.rejects(
      startTestBroker({ endpoints: [{ path: '/e', subprotocols: ['echo.v1'] }] }, [Duplicate]),
      /two subprotocol modules are named 'echo.v1'/,
    );
  });
});

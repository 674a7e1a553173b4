import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './support/free-port.js';
import { type TestBroker } from './support/test-broker.js';
import { startMqttBroker } from './support/mqtt-helpers.js';

// The script stays in the source tree: tsc does not copy it to dist.
const script = fileURLToPath(new URL('../../test/support/paho_scenario.py', import.meta.url));

// Debian's interpreter, which sees the Debian package (a pyenv python3 earlier on PATH would not).
const DEBIAN_PYTHON = '/usr/bin/python3';

function runScenario(port: number, version: '311' | '5'): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(DEBIAN_PYTHON, [script, String(port), version], { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, output: stdout + stderr });
    });
  });
}

describe('mqtt module: Debian python3-paho-mqtt over websockets', { timeout: 60_000 }, () => {
  let broker: TestBroker;

  before(async () => {
    // paho 1.x sends `Origin: https://<host>:<port>` even over ws://, which is not our origin: the
    // endpoint must list it, so the port is chosen before the broker starts.
    const port = await freePort();
    broker = await startMqttBroker({}, { origins: [`https://127.0.0.1:${port}`] }, { port });
  });
  after(() => broker.close());

  for (const version of ['311', '5'] as const) {
    it(`MQTT ${version === '5' ? '5' : '3.1.1'}: pub/sub, QoS 2, retained and will`, async () => {
      const { code, output } = await runScenario(broker.port, version);
      assert.equal(code, 0, output);
      const checks = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { check?: string }).check);
      assert.deepEqual(checks, ['pubsub', 'qos2', 'retained', 'will']);
    });
  }
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from './support/free-port.js';
import { type TestBroker } from './support/test-broker.js';
import { startMqttBroker } from './support/mqtt-helpers.js';
import { PAHO_CHECKS, runPaho } from './support/paho.js';

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
    it(`MQTT ${version === '5' ? '5' : '3.1.1'}: pub/sub, QoS 2, retained, will and a persistent session`, async () => {
      const { code, output, checks } = await runPaho(broker.port, version);
      assert.equal(code, 0, output);
      assert.deepEqual(checks, PAHO_CHECKS);
    });
  }
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '#broker/config';
import { mqttConfig } from './mqtt-config.js';

const endpoints = [{ path: '/mqtt', subprotocols: ['mqtt'] }];

/** The ConfigError a configuration gets, or '' when it parses. */
function problems(raw: Record<string, unknown>): string {
  try {
    parseConfig(raw, [mqttConfig]);
    return '';
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
}

describe('the mqtt key', () => {
  it("is the MQTT module's section: read with the broker's keys, defaults filled in", () => {
    const config = parseConfig({ endpoints, mqtt: { tcpPort: 1883 } }, [mqttConfig]);
    assert.equal(mqttConfig.of(config).tcpPort, 1883);
    assert.equal(mqttConfig.of(config).maxInflight, 32);
    assert.equal(mqttConfig.of(parseConfig({ endpoints }, [mqttConfig])).tcpPort, null);
  });

  it('names a bad setting by its dotted key, and the new home of the topic rules that were mqtt.acl', () => {
    assert.match(problems({ endpoints, mqtt: { tcpPrt: 1883 } }), /mqtt.*tcpPrt/);
    assert.match(problems({ endpoints, mqtt: { maxInflight: 0 } }), /^ {2}mqtt\.maxInflight: /m);
    assert.match(problems({ endpoints, mqtt: { acl: { rules: [] } } }), /mqtt\.acl: moved to authorization/);
  });

  it("holds MQTT's cluster settings, which the cluster key no longer takes", () => {
    const config = parseConfig({ endpoints, mqtt: { cluster: { ackWaitMs: 5000 } } }, [mqttConfig]);
    assert.deepEqual(mqttConfig.of(config).cluster, { ackWaitMs: 5000, streamMaxBytes: 0 });
    assert.deepEqual(mqttConfig.of(parseConfig({ endpoints }, [mqttConfig])).cluster, {
      ackWaitMs: 30_000,
      streamMaxBytes: 0,
    });
    assert.match(
      problems({ endpoints, mqtt: { cluster: { streamMaxBytes: -1 } } }),
      /mqtt\.cluster\.streamMaxBytes/,
    );
    assert.match(problems({ endpoints, cluster: { mqttAckWaitMs: 5000 } }), /cluster.*mqttAckWaitMs/);
  });
});

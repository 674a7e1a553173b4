import { TopicAuthorizer } from '#broker/auth';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '#broker/config';
import { authenticateFirstMessage } from '#broker/gateway';
import { ManualClock } from '#broker/kit';
import mqttPacket, { type IConnectPacket, type Packet } from 'mqtt-packet';
import { credentialOf } from './authenticate.js';
import { MqttBroker } from './mqtt-broker.js';
import { dispatch } from './handlers/dispatch.js';
import { MqttClient } from './mqtt-client.js';
import { mqttConfig } from './mqtt-config.js';

const quiet = { info() {}, warn() {}, debug() {}, error() {} };

function connect(extra: Partial<IConnectPacket> = {}): IConnectPacket {
  return { cmd: 'connect', protocolVersion: 5, clientId: 'c', clean: true, keepalive: 0, ...extra };
}

describe('CONNECT credentials', () => {
  it('a JWT-shaped password is a token, any other a password for the username, none is none', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln';
    assert.deepEqual(credentialOf(connect({ username: 'label', password: Buffer.from(jwt) })), {
      token: jwt,
    });
    assert.deepEqual(credentialOf(connect({ username: 'u', password: Buffer.from('pw') })), {
      username: 'u',
      password: Buffer.from('pw'),
    });
    assert.equal(credentialOf(connect({ username: 'u' })), null);
    assert.equal(credentialOf(connect({ password: Buffer.alloc(0) })), null);
  });

  for (const version of [5, 4] as const) {
    it(`a check that never finishes: CONNACK ${version === 5 ? '0x88' : '3'} (server unavailable) at the timeout, then close`, async () => {
      const mqtt = mqttConfig.of(parseConfig({ endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'] }] }));
      const received: Packet[] = [];
      const parser = mqttPacket.parser({ protocolVersion: version });
      parser.on('packet', (p: Packet) => received.push(p));
      let ended: number | null = null;
      const stalled = { verifyPassword: () => new Promise<null>(() => undefined) };
      const client = new MqttClient(
        new MqttBroker(mqtt, new TopicAuthorizer({ rules: [], noMatch: 'allow' }), new ManualClock()),
        { send: (bytes) => parser.parse(bytes), buffered: () => 0, close: (code) => (ended = code) },
        {
          transport: 'ws',
          connectionId: null,
          remoteAddress: '127.0.0.1',
          holdLimits: { maxQueued: 16, maxBytes: 8192 },
          authenticate: (credential) =>
            authenticateFirstMessage(
              credential,
              null,
              { mode: 'required', path: '/mqtt', timeoutMs: 30 },
              { verifyToken: () => Promise.reject(new Error('unused')), passwords: stalled },
            ),
        },
        quiet,
        dispatch,
      );
      const packet = connect({ protocolVersion: version, username: 'u', password: Buffer.from('pw') });
      client.receive(mqttPacket.generate(packet, { protocolVersion: version }));
      await new Promise((resolve) => setTimeout(resolve, 60));
      const [connack] = received;
      assert.ok(connack?.cmd === 'connack');
      assert.equal(version === 5 ? connack.reasonCode : connack.returnCode, version === 5 ? 0x88 : 3);
      if (version === 5) {
        assert.equal(connack.properties?.reasonString, 'the credential check did not finish in time');
      }
      assert.equal(ended, 1000);
    });
  }
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brokerConfigSchema } from '#broker/config';
import { settingsFor } from './ocpp-settings.js';

const endpoints = [{ path: '/ocpp/:chargePointId', subprotocols: ['ocpp1.6'] }];

describe('ocpp settings', () => {
  it('defaults: unknown charge points allowed, profile 0, accept, 300 s heartbeat, 30 s calls', () => {
    const { ocpp } = brokerConfigSchema.parse({ endpoints });
    assert.deepEqual(settingsFor(ocpp, '/ocpp/:chargePointId'), {
      allowUnknownChargePoints: true,
      securityProfile: 0,
      certificateOrganization: undefined,
      bootPolicy: 'accept',
      heartbeatIntervalSec: 300,
      bootRetryIntervalSec: 60,
      callTimeoutMs: 30_000,
      maxQueuedCalls: 16,
    });
  });

  it('an endpoint override applies to that endpoint only', () => {
    const { ocpp } = brokerConfigSchema.parse({
      endpoints,
      ocpp: { endpoints: [{ path: '/secure/:id', allowUnknownChargePoints: false, securityProfile: 2 }] },
    });
    assert.deepEqual(
      [
        settingsFor(ocpp, '/secure/:id').securityProfile,
        settingsFor(ocpp, '/secure/:id').allowUnknownChargePoints,
      ],
      [2, false],
    );
    assert.equal(settingsFor(ocpp, '/ocpp/:chargePointId').securityProfile, 0);
  });

  it('refuses unknown charge points on a Basic-auth profile, naming the setting', () => {
    const top = brokerConfigSchema.safeParse({ endpoints, ocpp: { securityProfile: 1 } });
    assert.equal(top.success, false);
    assert.deepEqual(top.error?.issues[0]?.path, ['ocpp', 'allowUnknownChargePoints']);
    const nested = brokerConfigSchema.safeParse({
      endpoints,
      ocpp: { endpoints: [{ path: '/x', securityProfile: 2 }] },
    });
    assert.deepEqual(nested.error?.issues[0]?.path, ['ocpp', 'endpoints', 0, 'allowUnknownChargePoints']);
    assert.equal(brokerConfigSchema.safeParse({ endpoints, ocpp: { bootPolicy: 'maybe' } }).success, false);
  });
});

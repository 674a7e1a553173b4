import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '#broker/config';
import { ocppConfig } from './ocpp-config.js';
import { settingsFor } from './ocpp-settings.js';

const endpoints = [{ path: '/ocpp/:chargePointId', subprotocols: ['ocpp1.6'] }];

/** The `ocpp` key of a configuration parsed with the OCPP module's section. */
function ocppOf(raw: Record<string, unknown>) {
  return ocppConfig.of(parseConfig(raw, [ocppConfig]));
}

/** The ConfigError a configuration gets, or '' when it parses. */
function problems(raw: Record<string, unknown>): string {
  try {
    parseConfig(raw, [ocppConfig]);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('ocpp settings', () => {
  it('defaults: unknown charge points allowed, profile 0, accept, 300 s heartbeat, 30 s calls', () => {
    const ocpp = ocppOf({ endpoints });
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
    const ocpp = ocppOf({
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
    assert.match(
      problems({ endpoints, ocpp: { securityProfile: 1 } }),
      /^ {2}ocpp\.allowUnknownChargePoints: /m,
    );
    assert.match(
      problems({ endpoints, ocpp: { endpoints: [{ path: '/x', securityProfile: 2 }] } }),
      /^ {2}ocpp\.endpoints\.0\.allowUnknownChargePoints: /m,
    );
    assert.match(problems({ endpoints, ocpp: { bootPolicy: 'maybe' } }), /^ {2}ocpp\.bootPolicy: /m);
    assert.match(problems({ endpoints, ocpp: { callTimeoutMs: 2147483648 } }), /^ {2}ocpp\.callTimeoutMs: /m);
  });
});

describe('OCPP security profile 3', () => {
  it('needs tls.caFile, and may take unknown charge points (the certificate proves who they are)', () => {
    const ocpp = { allowUnknownChargePoints: false, endpoints: [{ path: '/ocpp/:id', securityProfile: 3 }] };
    assert.match(
      problems({ endpoints, ocpp }),
      /^ {2}ocpp\.securityProfile: OCPP security profile 3 needs tls with a caFile/m,
    );
    assert.match(
      problems({ endpoints, tls: { certFile: 'c.pem', keyFile: 'k.pem' }, ocpp }),
      /needs tls with a caFile/,
    );
    const config = parseConfig(
      {
        endpoints,
        tls: { certFile: 'c.pem', keyFile: 'k.pem', caFile: 'ca.pem' },
        ocpp: { allowUnknownChargePoints: true, securityProfile: 3 },
      },
      [ocppConfig],
    );
    assert.equal(ocppConfig.of(config).securityProfile, 3);
    assert.equal(config.tls?.reloadIntervalMs, 10_000);
  });
});

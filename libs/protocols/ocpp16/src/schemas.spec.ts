import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OcppError } from './errors.js';
import { errorCodeFor, OcppSchemas } from './schemas.js';

const schemas = new OcppSchemas();

function codeOf(action: string, direction: 'req' | 'conf', payload: unknown): string | null {
  try {
    schemas.validate(action, direction, payload);
    return null;
  } catch (err) {
    assert.ok(err instanceof OcppError);
    return err.code;
  }
}

describe('errorCodeFor (the table in docs/ocpp.md)', () => {
  it('maps each schema keyword to one 1.6 code', () => {
    const table: [string, string, string][] = [
      ['type', '', 'FormationViolation'],
      ['additionalProperties', '', 'FormationViolation'],
      ['required', '', 'OccurenceConstraintViolation'],
      ['minItems', '/meterValue', 'OccurenceConstraintViolation'],
      ['maxItems', '/key', 'OccurenceConstraintViolation'],
      ['type', '/connectorId', 'TypeConstraintViolation'],
      ['format', '/timestamp', 'TypeConstraintViolation'],
      ['enum', '/status', 'PropertyConstraintViolation'],
      ['maxLength', '/idTag', 'PropertyConstraintViolation'],
      ['multipleOf', '/limit', 'PropertyConstraintViolation'],
      ['minimum', '/x', 'PropertyConstraintViolation'],
      ['somethingNew', '/x', 'FormationViolation'],
    ];
    for (const [keyword, instancePath, code] of table)
      assert.equal(errorCodeFor({ keyword, instancePath }), code, keyword);
  });
});

describe('OcppSchemas', () => {
  it('knows the 1.6 actions from the schema file, and only those', () => {
    assert.ok(schemas.knows('BootNotification'));
    assert.ok(schemas.knows('RemoteStartTransaction'));
    assert.ok(!schemas.knows('TransactionEvent'), 'a 2.0.1 action');
  });

  it('validates requests and confirmations against the real schemas', () => {
    assert.equal(codeOf('BootNotification', 'req', { chargePointVendor: 'A', chargePointModel: 'B' }), null);
    assert.equal(
      codeOf('BootNotification', 'req', { chargePointVendor: 'A' }),
      'OccurenceConstraintViolation',
    );
    assert.equal(
      codeOf('BootNotification', 'conf', { status: 'Accepted', currentTime: 'now', interval: 1 }),
      'TypeConstraintViolation',
    );
    assert.equal(codeOf('Heartbeat', 'req', 'ping'), 'FormationViolation');
    assert.equal(codeOf('Nope', 'req', {}), 'NotImplemented');
  });

  it('accepts decimal multiples the way charging limits need them (0.3 of 0.1)', () => {
    const profile = {
      connectorId: 1,
      csChargingProfiles: {
        chargingProfileId: 1,
        stackLevel: 0,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Absolute',
        chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 0.3 }] },
      },
    };
    assert.equal(codeOf('SetChargingProfile', 'req', profile), null);
  });

  it('names the field and the problem in the description and details', () => {
    try {
      schemas.validate('Authorize', 'req', { idTag: 'x'.repeat(21) });
      assert.fail('expected a violation');
    } catch (err) {
      assert.ok(err instanceof OcppError);
      assert.match(err.message, /\/idTag/);
      assert.deepEqual(err.details, { path: '/idTag', keyword: 'maxLength' });
    }
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callFrame, checkCallResult } from './ocpp-frames.js';

describe('callFrame', () => {
  it('builds CALLs that parse as [2, id, action, payload]', () => {
    assert.deepEqual(JSON.parse(callFrame('7', 'Heartbeat', 'x', 0)), [2, '7', 'Heartbeat', {}]);
    const meter = JSON.parse(callFrame('8', 'MeterValues', '2026-11-21T03:00:00.000Z', 42)) as unknown[];
    assert.deepEqual(meter.slice(0, 3), [2, '8', 'MeterValues']);
    assert.deepEqual(meter[3], {
      connectorId: 1,
      meterValue: [
        {
          timestamp: '2026-11-21T03:00:00.000Z',
          sampledValue: [{ value: '42', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
        },
      ],
    });
    assert.equal(
      (JSON.parse(callFrame('9', 'BootNotification', 'x', 0)) as unknown[])[2],
      'BootNotification',
    );
  });
});

describe('checkCallResult', () => {
  const now = '2026-11-21T03:00:00.000Z';

  it('accepts the right answers', () => {
    assert.equal(checkCallResult(`[3,"1",{"currentTime":"${now}"}]`, '1', 'Heartbeat'), null);
    assert.equal(checkCallResult('[3,"2",{}]', '2', 'MeterValues'), null);
    assert.equal(
      checkCallResult(
        `[3,"3",{"status":"Accepted","interval":300,"currentTime":"${now}"}]`,
        '3',
        'BootNotification',
      ),
      null,
    );
  });

  it('labels everything else', () => {
    assert.equal(checkCallResult('[3,"1"', '1', 'Heartbeat'), 'invalid JSON');
    assert.equal(checkCallResult('{}', '1', 'Heartbeat'), 'not an OCPP-J frame');
    assert.equal(
      checkCallResult('[4,"1","InternalError","",{}]', '1', 'MeterValues'),
      'CALLERROR InternalError for MeterValues',
    );
    assert.equal(checkCallResult('[3,"2",{}]', '1', 'MeterValues'), 'CALLRESULT for another message id');
    assert.equal(checkCallResult('[3,"1",{"x":1}]', '1', 'MeterValues'), 'MeterValues answer not {}');
    assert.equal(
      checkCallResult('[3,"1",{"currentTime":"soon"}]', '1', 'Heartbeat'),
      'Heartbeat answer without a valid currentTime',
    );
    assert.equal(
      checkCallResult(
        `[3,"1",{"status":"Pending","interval":60,"currentTime":"${now}"}]`,
        '1',
        'BootNotification',
      ),
      'BootNotification Pending',
    );
    assert.equal(checkCallResult('[2,"1","Reset",{}]', '1', 'Heartbeat'), 'unexpected frame type 2');
  });
});

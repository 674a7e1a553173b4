import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALL_EXAMPLES } from './call-examples.js';
import { CENTRAL_SYSTEM_ACTIONS } from './central-system-actions.js';
import { OcppSchemas } from './schemas.js';

describe('CALL_EXAMPLES (what the dashboard call form starts from)', () => {
  it('has one example for each action a central system sends, in the same order', () => {
    assert.deepEqual(
      CALL_EXAMPLES.map((a) => a.id),
      [...CENTRAL_SYSTEM_ACTIONS],
    );
  });

  it('each example passes its action request schema, as the admin API checks it', () => {
    const schemas = new OcppSchemas();
    for (const { id, example } of CALL_EXAMPLES) {
      assert.doesNotThrow(() => schemas.validate(id, 'req', example), id);
    }
  });
});

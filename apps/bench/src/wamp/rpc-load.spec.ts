import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resultProblem } from './rpc-load.js';

describe('resultProblem', () => {
  const sent = { requestId: 4, sentAt: 10.5 };

  it('accepts the RESULT of the pending call that echoes its arguments', () => {
    assert.equal(resultProblem('[50,4,{},[4,10.5]]', sent), null);
  });

  it('refuses another request, other arguments, and errors', () => {
    assert.equal(resultProblem('[50,3,{},[4,10.5]]', sent), 'RESULT does not answer the pending CALL');
    assert.equal(resultProblem('[50,4,{},[4,11]]', sent), 'RESULT does not answer the pending CALL');
    assert.equal(resultProblem('[50,4,{}]', sent), 'type 50 without [seq, sentAt] arguments');
    assert.equal(resultProblem('[8,48,4,{},"wamp.error.canceled"]', sent), 'ERROR wamp.error.canceled');
  });
});

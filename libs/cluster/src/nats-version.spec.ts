import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NATS_SERVER_KEEPS_ACKS, NATS_SERVER_NOT_MEASURED, olderThan } from './nats-version.js';

describe('olderThan: nats-server versions against the one the guarantees hold from', () => {
  it('compares major, minor and patch as numbers; a pre-release counts as its release', () => {
    assert.equal(olderThan('2.9.10', NATS_SERVER_KEEPS_ACKS), true);
    assert.equal(olderThan('2.10.15', NATS_SERVER_KEEPS_ACKS), true);
    assert.equal(olderThan('2.10.16', NATS_SERVER_KEEPS_ACKS), false);
    assert.equal(olderThan('2.10.27', NATS_SERVER_KEEPS_ACKS), false);
    assert.equal(olderThan('2.11.0-RC.1', NATS_SERVER_KEEPS_ACKS), false);
    assert.equal(olderThan('3.0.0', NATS_SERVER_KEEPS_ACKS), false);
    assert.equal(olderThan('1.4.1', NATS_SERVER_KEEPS_ACKS), true);
  });

  it('places 2.10 below the first release the guarantees were not measured on, 2.11 and 2.15 at or past it', () => {
    assert.equal(olderThan('2.10.27', NATS_SERVER_NOT_MEASURED), true);
    assert.equal(olderThan('2.11.0-RC.1', NATS_SERVER_NOT_MEASURED), false);
    assert.equal(olderThan('2.15.1', NATS_SERVER_NOT_MEASURED), false);
  });
});

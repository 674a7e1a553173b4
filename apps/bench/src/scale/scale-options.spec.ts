import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkFdLimit, parseOpenFilesLimit } from './fd-limit.js';
import {
  defaultAddresses,
  generatorShares,
  kindOf,
  parseScaleOptions,
  SOCKETS_PER_GENERATOR,
  sourceAddress,
} from './scale-options.js';

describe('scale options', () => {
  it('cycles source addresses 127.0.1.1 upward, never 127.0.0.1', () => {
    assert.equal(sourceAddress(0, 2), '127.0.1.1');
    assert.equal(sourceAddress(1, 2), '127.0.1.2');
    assert.equal(sourceAddress(2, 2), '127.0.1.1');
    assert.equal(sourceAddress(253, 300), '127.0.1.254');
    assert.equal(sourceAddress(254, 300), '127.0.2.1');
  });

  it('defaults to one address per 500 connections, at least 2', () => {
    assert.equal(defaultAddresses(400), 2);
    assert.equal(defaultAddresses(18_000), 36);
    assert.equal(defaultAddresses(100_001), 201);
    assert.equal(parseScaleOptions([])?.addresses, 200);
    assert.equal(parseScaleOptions(['--connections', '18000', '--addresses', '5'])?.addresses, 5);
  });

  it('mixes MQTT and chat half and half, or MQTT only', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => kindOf(i, 'half')),
      ['mqtt', 'chat', 'mqtt', 'chat'],
    );
    assert.deepEqual(
      [0, 1].map((i) => kindOf(i, 'mqtt')),
      ['mqtt', 'mqtt'],
    );
    assert.throws(() => parseScaleOptions(['--mix', 'chat']), /--mix/);
  });

  it('splits the population over as few generators as hold it', () => {
    assert.deepEqual(generatorShares(4000), [[0, 4000]]);
    const shares = generatorShares(100_000);
    assert.equal(shares.length, 7);
    assert.equal(
      shares.reduce((n, [, count]) => n + count, 0),
      100_000,
    );
    assert.ok(shares.every(([, count]) => count <= SOCKETS_PER_GENERATOR));
    assert.deepEqual(shares[1]?.[0], shares[0]?.[1]);
  });

  it('refuses a population the open-files limit cannot hold, naming the flag', () => {
    assert.equal(
      parseOpenFilesLimit('Max open files            20000                20000                files\n'),
      20000,
    );
    assert.doesNotThrow(() => checkFdLimit(18_000, 20_000, 'server'));
    assert.throws(() => checkFdLimit(100_000, 20_000, 'server'), /20000.*--connections 18000/s);
  });
});

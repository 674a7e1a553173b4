import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inBatches, withTimeout } from './async-util.js';
import { addError, errorTotal, markdownTable, times } from './markdown.js';
import { parseVmRss } from './process-memory.js';

describe('parseVmRss', () => {
  it('reads the VmRSS line in KiB', () => {
    assert.equal(parseVmRss('Name:\tnode\nVmPeak:\t 999 kB\nVmRSS:\t  171836 kB\nRssAnon:\t 1 kB\n'), 171836);
  });

  it('fails loudly without one', () => {
    assert.throws(() => parseVmRss('Name:\tzombie\n'), /no VmRSS/);
  });
});

describe('markdown helpers', () => {
  it('builds a table with alignment rules', () => {
    assert.equal(markdownTable(['a', 'b'], 'lr', [['x', '1']]), '| a | b |\n| :--- | ---: |\n| x | 1 |');
  });

  it('writes ratios, n/a without a denominator', () => {
    assert.equal(times(3, 2), '1.50×');
    assert.equal(times(3, 0), 'n/a');
    assert.equal(times(null, 2), 'n/a');
  });

  it('adds up errors by label', () => {
    const errors = new Map<string, number>();
    addError(errors, 'lost', 3);
    addError(errors, 'lost');
    addError(errors, 'timeout');
    assert.deepEqual(
      [...errors],
      [
        ['lost', 4],
        ['timeout', 1],
      ],
    );
    assert.equal(errorTotal(errors), 5);
  });
});

describe('async helpers', () => {
  it('runs every index, never more than `parallel` at once', async () => {
    let running = 0;
    let most = 0;
    const results = await inBatches(10, 3, async (i) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return i * 2;
    });
    assert.deepEqual(results, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    assert.equal(most, 3);
  });

  it('times out with the name of what it waited for', async () => {
    await assert.rejects(
      withTimeout(new Promise(() => undefined), 10, 'CONNACK'),
      /CONNACK: no answer within 10 ms/,
    );
    assert.equal(await withTimeout(Promise.resolve(5), 10, 'x'), 5);
  });
});

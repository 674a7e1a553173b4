import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TARGETS } from './targets.js';

/** The short, seeded mode of `npm run fuzz`: every parser of untrusted input, a few hundred inputs each. */
describe('fuzz targets, short seeded run', () => {
  for (const target of TARGETS) {
    it(target.name, async () => {
      await fc.assert(target.property(), { seed: 20261127, numRuns: 300 });
    });
  }
});

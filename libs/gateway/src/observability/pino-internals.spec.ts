import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { chindingsOf, streamOf } from './pino-internals.js';

describe('pino internals (a failure here means an upgrade of pino changed them: see pino-internals.ts)', () => {
  it("the logger's stream is its destination, and its bindings are a serialized JSON fragment", () => {
    const lines: string[] = [];
    const destination = { write: (line: string) => lines.push(line) };
    const logger = pino({ base: { node: 'a' } }, destination).child({ module: 'mqtt' });
    assert.equal(streamOf(logger), destination);
    assert.equal(chindingsOf(logger), ',"node":"a","module":"mqtt"');
    logger.info('x');
    assert.match(lines[0] ?? '', /^\{"level":30,"time":\d+,"node":"a","module":"mqtt","msg":"x"\}\n$/);
  });
});

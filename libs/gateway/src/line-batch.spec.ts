import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LineBatch, type LineSink } from './line-batch.js';

function recordingSink(): LineSink & { writes: string[]; flushes: number } {
  const sink = {
    writes: [] as string[],
    flushes: 0,
    write(text: string) {
      sink.writes.push(text);
    },
    flush(cb: () => void) {
      sink.flushes++;
      cb();
    },
  };
  return sink;
}

describe('LineBatch', () => {
  it('passes lines on joined, in order, once a batch is full', () => {
    const sink = recordingSink();
    const batch = new LineBatch(sink, 10);
    batch.write('abcd\n');
    batch.write('efg\n');
    assert.deepEqual(sink.writes, [], 'held below the batch size');
    batch.write('hi\n');
    batch.write('jk\n');
    assert.deepEqual(sink.writes, ['abcd\nefg\nhi\n']);
  });

  it('passes what it holds on before flushing the stream under it', async () => {
    const sink = recordingSink();
    const batch = new LineBatch(sink, 4096);
    batch.write('one\n');
    batch.write('two\n');
    await new Promise<void>((resolve) => batch.flush(() => resolve()));
    assert.deepEqual(sink.writes, ['one\ntwo\n']);
    assert.equal(sink.flushes, 1);
    batch.flush();
    assert.deepEqual(sink.writes, ['one\ntwo\n'], 'nothing held, nothing written');
  });

  it("loses no line of createLogger's when the process exits at once", async () => {
    const logger = new URL('./logger.js', import.meta.url).href;
    const script =
      `import { createLogger } from ${JSON.stringify(logger)};\n` +
      `const log = createLogger('info');\n` +
      `for (let i = 0; i < 1000; i++) log.info({ i }, 'line');\n` +
      `process.exit(0);\n`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const numbers = stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { i: number }).i);
    assert.deepEqual(
      numbers,
      Array.from({ length: 1000 }, (_, i) => i),
    );
  });
});

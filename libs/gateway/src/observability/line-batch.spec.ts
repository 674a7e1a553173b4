import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LineBatch, type LineSink } from './line-batch.js';

function recordingSink(): LineSink & { writes: string[]; flushes: number } {
  const sink = {
    writes: [] as string[],
    flushes: 0,
    flushSync() {
      throw new Error('not at exit in this test');
    },
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
    const batch = new LineBatch(sink, -1, 10);
    batch.write('abcd\n');
    batch.write('efg\n');
    assert.deepEqual(sink.writes, [], 'held below the batch size');
    batch.write('hi\n');
    batch.write('jk\n');
    assert.deepEqual(sink.writes, ['abcd\nefg\nhi\n']);
  });

  it('passes what it holds on before flushing the stream under it', async () => {
    const sink = recordingSink();
    const batch = new LineBatch(sink, -1, 4096);
    batch.write('one\n');
    batch.write('two\n');
    await new Promise<void>((resolve) => batch.flush(() => resolve()));
    assert.deepEqual(sink.writes, ['one\ntwo\n']);
    assert.equal(sink.flushes, 1);
    batch.flush();
    assert.deepEqual(sink.writes, ['one\ntwo\n'], 'nothing held, nothing written');
  });

  it("loses no line of createLogger's when the process exits with its stdout pipe full", async () => {
    const logger = new URL('./logger.js', import.meta.url).href;
    // Touching process.stdout makes fd 1, a pipe here, non-blocking. The second lines are held when
    // the process exits, sonic-boom idle, and the pipe is full: an asynchronous write would be lost.
    const script =
      `import { writeSync } from 'node:fs';\n` +
      `import { createLogger } from ${JSON.stringify(logger)};\n` +
      `void process.stdout;\n` +
      `const log = createLogger('info');\n` +
      `let i = 0;\n` +
      `const line = () => log.info({ i: i++, pad: 'x'.repeat(40) }, 'line');\n` +
      `for (let k = 0; k < 46; k++) line();\n` +
      `log.flush();\n` +
      `setTimeout(() => {\n` +
      `  for (let k = 0; k < 30; k++) line();\n` +
      `  try { for (;;) writeSync(1, '#'.repeat(511) + '\\n'); } catch {}\n` +
      `  process.exit(0);\n` +
      `}, 100);\n`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Listened for from the start; nothing is read until well after the child filled the pipe.
    const chunks: Buffer[] = [];
    child.stdout.pause();
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => child.on('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.stdout.resume();
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([
      closed,
      new Promise((_, reject) => {
        deadline = setTimeout(() => reject(new Error('the child did not end within 10 s')), 10_000);
      }),
    ]);
    clearTimeout(deadline);
    const numbers = Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { i: number }).i);
    assert.deepEqual(
      [...numbers].sort((a, b) => a - b),
      Array.from({ length: 76 }, (_, i) => i),
    );
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

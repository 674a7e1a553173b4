import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { DecisionLog, type DecisionFields } from './decision-log.js';
import { createLogger } from './logger.js';

function sink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
}

function capture(level: string): {
  log: DecisionLog;
  pinoLine: (f: DecisionFields) => void;
  lines: string[];
} {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger(level, sink);
  return { log: new DecisionLog(logger), pinoLine: (f) => logger.info(f, 'handshake'), lines };
}

const FIELDS: DecisionFields = {
  status: 101,
  endpoint: '/chat',
  subprotocol: 'chat.v1',
  reason: 'accepted',
  path: '/chat?token=[REDACTED]',
  offered: 'chat.v1, bearer.[REDACTED]',
  client: '127.0.0.1',
  durationMs: 0.125,
};

describe('DecisionLog', () => {
  it('writes the line pino would write for the same fields', () => {
    const { log, pinoLine, lines } = capture('info');
    log.write(FIELDS);
    pinoLine(FIELDS);
    log.write({ ...FIELDS, status: 403, endpoint: null, subprotocol: null, offered: undefined });
    pinoLine({ ...FIELDS, status: 403, endpoint: null, subprotocol: null, offered: undefined });
    assert.equal(lines.length, 4);
    const [ours, theirs, ours403, theirs403] = lines.map((line) => {
      assert.ok(line.endsWith('}\n') && line.indexOf('\n') === line.length - 1, 'one line each');
      const parsed = JSON.parse(line) as Record<string, unknown>;
      assert.equal(typeof parsed['time'], 'number');
      delete parsed['time'];
      return parsed;
    });
    assert.deepEqual(ours, theirs);
    assert.deepEqual(Object.keys(ours ?? {}), Object.keys(theirs ?? {}), 'in the same order');
    assert.deepEqual(ours403, theirs403);
    assert.equal(ours?.['service'], 'ws-broker', "the logger's bindings are kept");
  });

  it('escapes what a client put in the request', () => {
    const { log, lines } = capture('info');
    const odd = { ...FIELDS, reason: 'a "quoted"\nline\u2028', path: '/p\\"}{,\u0000' };
    log.write(odd);
    // The second time the reason is the quoted copy DecisionLog kept.
    log.write(odd);
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      assert.equal(parsed['reason'], odd.reason);
      assert.equal(parsed['path'], odd.path);
    }
    assert.equal(lines.length, 2);
  });

  it('keeps a bounded number of quoted strings, and quotes the rest each time', () => {
    const { log, lines } = capture('info');
    for (let i = 0; i < 300; i++) log.write({ ...FIELDS, reason: `reason ${i}`, endpoint: `/e${i}` });
    log.write({ ...FIELDS, reason: 'reason 299', endpoint: '/e299' });
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      parsed.map((line) => line['reason']),
      [...Array.from({ length: 300 }, (_, i) => `reason ${i}`), 'reason 299'],
    );
    assert.equal(parsed.at(-1)?.['endpoint'], '/e299');
    const quoted = (log as unknown as { quoted: Map<string, string> }).quoted;
    assert.equal(quoted.size, 256);
  });

  it("leaves a logger of another shape to pino: its own message key, or a multistream's routing", () => {
    const keyed: string[] = [];
    new DecisionLog(pino({ messageKey: 'message' }, sink(keyed))).write(FIELDS);
    const line = JSON.parse(keyed[0] as string) as Record<string, unknown>;
    assert.equal(line['message'], 'handshake');
    assert.equal(line['msg'], undefined);
    assert.equal(line['status'], 101);

    const routed: string[] = [];
    const errorsOnly: string[] = [];
    const logger = createLogger(
      'info',
      pino.multistream([
        { level: 'info', stream: sink(routed) },
        { level: 'error', stream: sink(errorsOnly) },
      ]),
    );
    new DecisionLog(logger).write(FIELDS);
    logger.error('a failure');
    new DecisionLog(logger).write(FIELDS);
    assert.equal(routed.filter((l) => l.includes('"msg":"handshake"')).length, 2, 'none dropped');
    assert.equal(
      errorsOnly.filter((l) => l.includes('handshake')).length,
      0,
      'none sent to the error stream',
    );
  });

  it('writes nothing when info is not enabled', () => {
    const { log, lines } = capture('warn');
    log.write(FIELDS);
    assert.deepEqual(lines, []);
  });
});

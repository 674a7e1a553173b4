import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { BrokerSection, ConfigSection } from './config-section.js';
import { ConfigError, loadConfig, parseConfig } from './load-config.js';

const SHOUT = new ConfigSection(
  'shout',
  z
    .object({ maxLength: z.number().int().positive().default(280), prefix: z.string().default('') })
    .strict()
    .default({ maxLength: 280, prefix: '' }),
);

const endpoints = [{ path: '/ws', subprotocols: ['shout.v1'] }];

function rejected(run: () => unknown): string {
  let message = '';
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    message = err.message;
    return true;
  });
  return message;
}

describe('config sections: a module adds a key of its own', () => {
  it('validates the key with its schema and hands the module its value, defaults filled in', () => {
    const given = parseConfig({ endpoints, shout: { maxLength: 20 } }, [SHOUT]);
    assert.deepEqual(SHOUT.of(given), { maxLength: 20, prefix: '' });
    const absent = parseConfig({ endpoints }, [SHOUT]);
    assert.deepEqual(SHOUT.of(absent), { maxLength: 280, prefix: '' });
    assert.equal(absent.port, 8080, "the broker's own keys are parsed as before");
  });

  it("names a bad value by its dotted key, in one error with the broker's own problems", () => {
    const message = rejected(() =>
      parseConfig({ endpoints, port: -1, shout: { maxLength: 0, colour: 'red' } }, [SHOUT]),
    );
    assert.match(message, /^ {2}port: /m);
    assert.match(message, /^ {2}shout\.maxLength: /m);
    assert.match(message, /^ {2}shout: .*colour/m);
  });

  it('refuses the key when no module gave its section: an unknown key stays an error', () => {
    assert.match(
      rejected(() => parseConfig({ endpoints, shout: { maxLength: 20 } })),
      /\(root\): Unrecognized key: "shout" \(a module's own key needs its module loaded, or its ConfigSection in sections\)/,
    );
  });

  it("refuses a section that claims one of the broker's keys, or a key claimed twice", () => {
    const clash = new ConfigSection('cluster', z.object({}));
    assert.match(
      rejected(() => parseConfig({ endpoints }, [clash])),
      /"cluster" is claimed twice/,
    );
    const otherShout = new ConfigSection('shout', z.object({}));
    assert.match(
      rejected(() => parseConfig({ endpoints }, [SHOUT, otherShout])),
      /"shout" is claimed twice/,
    );
  });

  it('takes the section a loaded module declared, without sections, as the built-in protocols do', () => {
    const whisper = new ConfigSection(
      'whisper',
      z
        .object({ level: z.number().default(1) })
        .strict()
        .default({ level: 1 }),
    );
    assert.match(
      rejected(() => parseConfig({ endpoints, whisper: {} })),
      /Unrecognized key: "whisper"/,
    );
    @BrokerSection(whisper)
    class WhisperModule {}
    assert.ok(WhisperModule);
    assert.deepEqual(whisper.of(parseConfig({ endpoints, whisper: { level: 3 } })), { level: 3 });
    assert.match(
      rejected(() => parseConfig({ endpoints, whisper: { level: 'x' } })),
      /^ {2}whisper\.level: /m,
    );
    // Declared and given too: the same section, once.
    assert.deepEqual(whisper.of(parseConfig({ endpoints }, [whisper])), { level: 1 });
  });

  it('reads the key from CONFIG and the defaults through loadConfig', () => {
    const config = loadConfig({
      env: {},
      defaults: { endpoints, shout: { prefix: '> ' } },
      sections: [SHOUT],
    });
    assert.deepEqual(SHOUT.of(config), { maxLength: 280, prefix: '> ' });
  });

  it('parses a parsed configuration again to the same value (BrokerModule parses what loadConfig made)', () => {
    const once = parseConfig({ endpoints, shout: { maxLength: 20 } }, [SHOUT]);
    assert.deepEqual(parseConfig(once, [SHOUT]), once);
  });

  it('gives the defaults to a module whose section was not given (its key then cannot be set)', () => {
    assert.deepEqual(SHOUT.of(parseConfig({ endpoints })), { maxLength: 280, prefix: '' });
    const required = new ConfigSection('required', z.object({ url: z.string() }));
    assert.throws(() => required.of(parseConfig({ endpoints })), /"required" is required/);
  });

  it('takes a camelCase word as its key', () => {
    assert.throws(() => new ConfigSection('my-module', z.object({})), /camelCase word/);
  });
});

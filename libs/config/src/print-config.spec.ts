import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigSection } from './config-section.js';
import { parseConfig } from './load-config.js';
import { printableConfig } from './print-config.js';

/** A module's key with a secret and a limit named like one, as the built-in protocols' keys have. */
const MODULE = new ConfigSection(
  'relay',
  z.object({ password: z.string(), limits: z.object({ maxTokens: z.number() }) }).strict(),
);

describe('printableConfig', () => {
  it('prints every default filled in, and no secret: keys named as secrets, passwords in URLs', () => {
    const config = parseConfig(
      {
        relay: { password: 'relay-password', limits: { maxTokens: 500 } },
        jwt: { secret: 'a-jwt-secret-of-at-least-32-characters!' },
        introspection: {
          url: 'https://sso.example/introspect',
          clientId: 'broker',
          clientSecret: 'intro-secret',
        },
        admin: { tokens: ['admin-token-0123456789'] },
        store: { databaseUrl: 'postgres://broker:db-password@db.example/broker' },
        cluster: { natsUrl: ['nats://user:nats-password@nats.example:4222'] },
        endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'] }],
      },
      [MODULE],
    );
    const text = printableConfig(config);
    for (const secret of [
      'a-jwt-secret',
      'intro-secret',
      'admin-token',
      'db-password',
      'nats-password',
      'relay-password',
    ])
      assert.ok(!text.includes(secret), `${secret} printed`);
    const printed = parse(text) as Record<string, Record<string, unknown>>;
    assert.equal(printed['jwt']?.['secret'], '[REDACTED]');
    assert.deepEqual(printed['admin']?.['tokens'], ['[REDACTED]']);
    assert.equal(printed['store']?.['databaseUrl'], 'postgres://broker:[REDACTED]@db.example/broker');
    assert.equal(printed['port'], 8080, 'a schema default is shown');
    assert.equal(printed['relay']?.['password'], '[REDACTED]', "a module's secret too");
    assert.equal(
      (printed['relay']?.['limits'] as Record<string, unknown> | undefined)?.['maxTokens'],
      500,
      'a key that merely ends in "tokens" is not a secret',
    );
  });

  it('fails closed on a URL it cannot parse, and hides a token that stands alone before @', () => {
    const config = parseConfig({
      store: { databaseUrl: 'postgres://u:pa#ss@h1:5432,h2:5432/db' },
      cluster: { natsUrl: ['nats://s3cret-token@nats.example:4222'] },
      endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'] }],
    });
    const text = printableConfig(config);
    assert.ok(!text.includes('pa#ss') && !text.includes('s3cret-token'), text);
  });
});

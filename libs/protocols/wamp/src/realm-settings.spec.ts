import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type WampConfig, wampConfig } from './wamp-config.js';
import { autoRealmSettings, realmSettings } from './realm-settings.js';
import { craKey } from './wampcra.js';

function parse(input: unknown): WampConfig {
  const result = wampConfig.validate(input);
  if ('issues' in result) throw new Error(result.issues.map((i) => i.message).join('; '));
  return result.value;
}

describe('realm settings from the configuration', () => {
  it('the default is realm1, open to anonymous sessions, bridged to the bus', () => {
    const config = wampConfig.of({});
    assert.deepEqual(
      config.realms.map((r) => r.name),
      ['realm1'],
    );
    assert.equal(config.busRealm, 'realm1');
    assert.equal(autoRealmSettings(config), null);
    const [first] = config.realms;
    assert.ok(first);
    const realm1 = realmSettings(first);
    assert.equal(realm1.anonymousRole, 'anonymous');
    assert.equal(realm1.roles.get('anonymous')?.allowsEverything, true);
    assert.equal(realm1.roles.get('authenticated')?.allowsEverything, true);
  });

  it('compiles roles and derives wampcra keys once, salted or not', () => {
    const config = parse({
      realms: [
        {
          name: 'app',
          uris: 'strict',
          anonymousRole: null,
          authenticatedRole: 'user',
          roles: [{ name: 'user', permissions: [{ uri: 'app.', match: 'prefix', allow: ['call'] }] }],
          wampcra: [
            { authid: 'a', role: 'user', secret: 's1' },
            { authid: 'b', role: 'user', secret: 's2', salt: 'salt', iterations: 10, keylen: 16 },
          ],
        },
      ],
      autoCreateRealms: true,
    });
    const [configured] = config.realms;
    assert.ok(configured);
    const app = realmSettings(configured);
    assert.equal(app.uriRule, 'strict');
    assert.equal(app.anonymousRole, null);
    assert.equal(app.roles.get('user')?.allows('call', 'app.x'), true);
    assert.equal(app.roles.get('user')?.allows('publish', 'app.x'), false);
    assert.equal(app.craUsers.get('a')?.key, 's1');
    assert.equal(app.craUsers.get('b')?.key, craKey('s2', { salt: 'salt', iterations: 10, keylen: 16 }));
    assert.deepEqual(app.craUsers.get('b')?.salt, { salt: 'salt', iterations: 10, keylen: 16 });
    assert.equal(autoRealmSettings(config)?.anonymousRole, 'anonymous');
  });

  it('refuses unknown roles, duplicate realms, bad realm names and unknown keys, naming the setting', () => {
    const problems = (input: unknown): string[] => {
      const result = wampConfig.validate(input);
      assert.ok('issues' in result);
      // Each path leads with the section's own key.
      return result.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
    };
    assert.deepEqual(problems({ realms: [{ name: 'realm1', anonymousRole: 'ghost' }] }), [
      'realms.0.anonymousRole: no role ghost in this realm',
    ]);
    assert.deepEqual(
      problems({ realms: [{ name: 'realm1', wampcra: [{ authid: 'a', role: 'x', secret: 's' }] }] }),
      ['realms.0.wampcra.0.role: no role x in this realm'],
    );
    assert.deepEqual(problems({ realms: [{ name: 'realm1' }, { name: 'realm1' }] }), [
      'realms.1.name: realm realm1 is listed twice',
    ]);
    assert.match(
      problems({ realms: [{ name: 'bad..name' }] })[0] ?? '',
      /^realms\.0\.name: must be a WAMP URI/,
    );
    assert.match(problems({ realm: [] })[0] ?? '', /realm/);
    assert.deepEqual(
      problems({ realms: [{ name: 'realm1', roles: [{ name: 'anonymous' }, { name: 'anonymous' }] }] }),
      [
        'realms.0.authenticatedRole: no role authenticated in this realm',
        'realms.0.roles.1: role anonymous is listed twice',
      ],
    );
    const joe = { authid: 'joe', role: 'anonymous', secret: 's' };
    assert.deepEqual(
      problems({
        realms: [
          {
            name: 'realm1',
            authenticatedRole: 'anonymous',
            roles: [{ name: 'anonymous' }],
            wampcra: [joe, joe],
          },
        ],
      }),
      ['realms.0.wampcra.1: authid joe is listed twice'],
    );
    assert.deepEqual(problems({ realms: [{ name: 'app' }] }), ['busRealm: no realm realm1 to bridge']);
    assert.ok('value' in wampConfig.validate({ realms: [{ name: 'app' }], busRealm: null }));
  });
});

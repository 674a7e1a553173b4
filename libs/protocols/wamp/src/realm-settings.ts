import { type WampConfig, type WampRealmConfig } from './wamp-config.js';
import { Permissions } from './permissions.js';
import { type CraUser, type RealmSettings } from './realm.js';
import { craKey } from './wampcra.js';

/** Compiles one configured realm: permissions per role, wampcra keys derived once at boot. */
export function realmSettings(config: WampRealmConfig): RealmSettings {
  const craUsers = new Map<string, CraUser>();
  for (const user of config.wampcra) {
    const salt =
      user.salt === undefined
        ? undefined
        : { salt: user.salt, iterations: user.iterations, keylen: user.keylen };
    craUsers.set(user.authid, {
      authid: user.authid,
      role: user.role,
      key: craKey(user.secret, salt),
      ...(salt && { salt }),
    });
  }
  return {
    name: config.name,
    uriRule: config.uris,
    anonymousRole: config.anonymousRole,
    authenticatedRole: config.authenticatedRole,
    roles: new Map(config.roles.map((role) => [role.name, new Permissions(role.permissions)])),
    craUsers,
  };
}

/** The template for realms created on first use: the default roles, no wampcra users. */
export function autoRealmSettings(config: WampConfig): RealmSettings | null {
  if (!config.autoCreateRealms) return null;
  return realmSettings({
    name: 'auto',
    uris: 'loose',
    anonymousRole: 'anonymous',
    authenticatedRole: 'authenticated',
    roles: ['anonymous', 'authenticated'].map((name) => ({
      name,
      permissions: [{ uri: '', match: 'prefix', allow: ['call', 'register', 'publish', 'subscribe'] }],
    })),
    wampcra: [],
  });
}

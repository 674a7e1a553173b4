import { ConfigSection } from '#broker/config';
import { z } from 'zod';

// The `wamp` key of the broker's configuration: realms, their roles and wampcra users, the bus bridge,
// per-session limits. The WAMP module declares it (`BrokerSection`), as any module does its own.

const ALL_ACTIONS = ['call', 'register', 'publish', 'subscribe'] as const;

const permission = z
  .object({
    uri: z.string(),
    match: z.enum(['exact', 'prefix', 'wildcard']).default('exact'),
    allow: z.array(z.enum(ALL_ACTIONS)).default([]),
  })
  .strict();

const role = z
  .object({
    name: z.string().min(1),
    permissions: z.array(permission).default([]),
  })
  .strict();

const craUser = z
  .object({
    authid: z.string().min(1),
    role: z.string().min(1),
    secret: z.string().min(1),
    salt: z.string().min(1).optional(),
    iterations: z.number().int().positive().max(1_000_000).default(1000),
    keylen: z.number().int().positive().max(1024).default(32),
  })
  .strict();

const openRole = (name: string) => ({
  name,
  permissions: [{ uri: '', match: 'prefix' as const, allow: [...ALL_ACTIONS] }],
});

const realm = z
  .object({
    name: z.string().regex(/^([^\s.#]+\.)*[^\s.#]+$/, 'must be a WAMP URI'),
    uris: z.enum(['loose', 'strict']).default('loose'),
    anonymousRole: z.string().min(1).nullable().default('anonymous'),
    authenticatedRole: z.string().min(1).default('authenticated'),
    roles: z.array(role).default([openRole('anonymous'), openRole('authenticated')]),
    wampcra: z.array(craUser).default([]),
  })
  .strict()
  .superRefine((r, ctx) => {
    const names = new Set(r.roles.map((x) => x.name));
    const need = (name: string | null, path: (string | number)[]): void => {
      if (name !== null && !names.has(name))
        ctx.addIssue({ code: 'custom', message: `no role ${name} in this realm`, path });
    };
    need(r.anonymousRole, ['anonymousRole']);
    need(r.authenticatedRole, ['authenticatedRole']);
    r.wampcra.forEach((u, i) => need(u.role, ['wampcra', i, 'role']));
    const once = (values: string[], what: string, key: string): void => {
      values.forEach((value, i) => {
        if (values.indexOf(value) !== i) {
          ctx.addIssue({ code: 'custom', message: `${what} ${value} is listed twice`, path: [key, i] });
        }
      });
    };
    once(
      r.roles.map((x) => x.name),
      'role',
      'roles',
    );
    once(
      r.wampcra.map((u) => u.authid),
      'authid',
      'wampcra',
    );
  });

const limits = z
  .object({
    maxSubscriptionsPerSession: z.number().int().positive().default(1000),
    maxRegistrationsPerSession: z.number().int().positive().default(100),
    maxPendingCallsPerSession: z.number().int().positive().default(1000),
    authTimeoutMs: z.number().int().positive().max(3_600_000).default(10_000),
    maxRealms: z.number().int().positive().default(100),
  })
  .strict();

const wampConfigSchema = z
  .object({
    realms: z.array(realm).default([realm.parse({ name: 'realm1' })]),
    /** Create unknown realms on first HELLO, with the default roles (up to limits.maxRealms). */
    autoCreateRealms: z.boolean().default(false),
    /** The realm whose topics map to bus topics (a.b.c <-> a/b/c); null: no bridge. */
    busRealm: z.string().min(1).nullable().default('realm1'),
    limits: limits.default(limits.parse({})),
  })
  .strict()
  .superRefine((w, ctx) => {
    const seen = new Set<string>();
    w.realms.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({
          code: 'custom',
          message: `realm ${r.name} is listed twice`,
          path: ['realms', i, 'name'],
        });
      seen.add(r.name);
    });
    if (w.busRealm !== null && !w.autoCreateRealms && !seen.has(w.busRealm)) {
      ctx.addIssue({ code: 'custom', message: `no realm ${w.busRealm} to bridge`, path: ['busRealm'] });
    }
  });

export type WampConfig = z.infer<typeof wampConfigSchema>;
export type WampRealmConfig = WampConfig['realms'][number];

export const wampConfig = new ConfigSection('wamp', wampConfigSchema.default(wampConfigSchema.parse({})));

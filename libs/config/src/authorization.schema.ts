import { z } from 'zod';

// The `authorization` section: topic rules that every protocol module asks before a principal
// publishes or subscribes on the bus (docs/security.md, Authorization). The filters are checked when the
// authorizer is built at boot, where the bus's topic grammar lives.

const rule = z
  .object({
    who: z.enum(['all', 'anonymous', 'authenticated']).default('all'),
    /** Only this principal (its subject: a username, a token's `sub`). */
    user: z.string().min(1).optional(),
    /** Only this client id (a protocol's own, MQTT's; clients of protocols without one never match). */
    clientId: z.string().min(1).optional(),
    action: z.enum(['publish', 'subscribe', 'all']).default('all'),
    /** Topic filters; `%c` stands for the client id and `%u` for the principal's subject. */
    topics: z.array(z.string().min(1).max(65_535)).min(1).max(100),
    permission: z.enum(['allow', 'deny']),
  })
  .strict()
  .refine((r) => !(r.who === 'anonymous' && r.user !== undefined), {
    message: 'a rule for one user cannot be for anonymous clients',
    path: ['user'],
  });

/** In order, the first rule that applies decides; none: noMatch. Scopes are asked first (docs/security.md). */
export const authorization = z
  .object({
    rules: z.array(rule).max(10_000).default([]),
    noMatch: z.enum(['allow', 'deny']).default('allow'),
  })
  .strict();

export type AuthorizationConfig = z.infer<typeof authorization>;
export type TopicRuleConfig = AuthorizationConfig['rules'][number];

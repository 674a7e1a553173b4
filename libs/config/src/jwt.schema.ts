import { z } from 'zod';
import { timerMs } from './schema-units.js';

// The `jwt` section: how a JWT credential is verified.

/** Fetching an identity provider's keys (`jwksUrl` or `discovery`). */
const jwks = z
  .object({
    /** No two fetches closer than this: an unknown `kid`, a failed fetch or a stale set waits for it. */
    refreshMinSec: z.number().int().min(1).max(3600).default(30),
    /** How long keys are fresh when the provider's answer has no `Cache-Control: max-age`. */
    cacheSec: z.number().int().min(1).max(86_400).default(600),
    /** How long one fetch may take, the whole answer read. */
    timeoutMs: timerMs.default(5000),
    /** The most a key set or discovery document may weigh. */
    maxBytes: z
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(256 * 1024),
  })
  .strict();

/** How an identity provider's keys are fetched when the `jwks` section is not set. */
export const JWKS_DEFAULTS = jwks.parse({});

const httpUrl = z
  .string()
  .url()
  .regex(/^https?:\/\//i, 'must be an http:// or https:// URL');

export const jwt = z
  .object({
    secret: z.string().min(32, 'must be at least 32 characters (HS256 key)').optional(),
    publicKeyFile: z.string().min(1).optional(),
    jwksFile: z.string().min(1).optional(),
    /** The identity provider's JWKS URL; its keys are fetched, cached and refreshed as they rotate. */
    jwksUrl: httpUrl.optional(),
    /** OpenID Connect discovery: the JWKS URL is read from `<issuer>/.well-known/openid-configuration`. */
    discovery: z.boolean().optional(),
    /** Unset: JWKS_DEFAULTS. */
    jwks: jwks.optional(),
    algorithms: z.array(z.string()).min(1).optional(),
    issuer: z.string().optional(),
    audience: z.string().optional(),
    clockToleranceSec: z.number().int().nonnegative().default(5),
    /** The longest a token may still be valid for when presented (its `exp` from now); 0: no limit. */
    maxLifetimeSec: z.number().int().nonnegative().default(0),
    /** Verified tokens remembered, so a reconnect with the same token skips the signature check; 0 turns it off. */
    verifiedCacheSize: z.number().int().nonnegative().max(1_000_000).default(4096),
  })
  .strict()
  .refine(
    (j) =>
      [j.secret, j.publicKeyFile, j.jwksFile, j.jwksUrl, j.discovery === true ? true : undefined].filter(
        (v) => v !== undefined,
      ).length <= 1,
    { message: 'set only one of secret, publicKeyFile, jwksFile, jwksUrl, discovery' },
  )
  .refine((j) => j.discovery !== true || httpUrl.safeParse(j.issuer).success, {
    message: 'discovery needs issuer, an http:// or https:// URL',
    path: ['issuer'],
  });

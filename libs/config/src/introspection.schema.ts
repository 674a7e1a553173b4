import { z } from 'zod';
import { timerMs } from './schema-units.js';

// The `introspection` section: opaque tokens checked by the identity provider (RFC 7662).

export const introspection = z
  .object({
    /** The provider's token introspection endpoint. */
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//i, 'must be an http:// or https:// URL'),
    /** The broker's client at the provider, sent with its secret as HTTP Basic (RFC 6749 2.3.1). */
    clientId: z.string().min(1),
    /** Or INTROSPECTION_CLIENT_SECRET. */
    clientSecret: z.string().min(1),
    /** An active token is taken from the cache for at most this long, never past its `exp`. */
    cacheSec: z.number().int().min(0).max(3600).default(60),
    /** An inactive (or unknown) token is refused from the cache for this long. */
    negativeCacheSec: z.number().int().min(0).max(3600).default(10),
    /** Tokens remembered, active and inactive together. */
    cacheSize: z.number().int().min(0).max(1_000_000).default(10_000),
    timeoutMs: timerMs.default(5000),
    maxBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(64 * 1024),
    /** When set, the answer's `aud` must name it. */
    audience: z.string().min(1).optional(),
  })
  .strict();

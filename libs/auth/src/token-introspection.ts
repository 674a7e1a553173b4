import { type IntrospectionConfig } from '#broker/config';
import { CredentialError, CredentialUnavailableError } from '#broker/handshake';
import { fetchJson } from './fetch-json.js';
import { type VerifiedToken } from './jwt-verifier.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/** An answer kept: the token's principal, or why it is refused; until when it holds. */
interface Kept {
  readonly verdict: VerifiedToken | { readonly refused: string };
  readonly until: number;
}

/** What the introspection endpoint was asked, for the metrics. */
export interface IntrospectionStats {
  asked: number;
  failed: number;
  /** Why the last request failed, while no request has been answered since. */
  lastError: string | null;
  /** Epoch ms of the last answer (active or not), or null. */
  answeredAt: number | null;
}

/**
 * Opaque tokens checked by the identity provider's introspection endpoint (RFC 7662): a POST of the
 * token with the broker's client credentials; `active: true` with a `sub` (or `username`) is a principal
 * whose claims are the answer (`scope` gives scopes, `exp` ends the connection as a JWT's does). Answers
 * are kept in a cache bounded in entries (`cacheSize`) and in time: an active token for `cacheSec`, never
 * past its `exp`, an inactive one for `negativeCacheSec`. One request at a time per token. An endpoint
 * that does not answer refuses what the cache does not hold as unavailable (503), never as a bad token.
 */
export class TokenIntrospection {
  readonly stats: IntrospectionStats = { asked: 0, failed: 0, lastError: null, answeredAt: null };
  private readonly kept: VerifiedTokenCache<Kept>;
  private readonly asking = new Map<string, Promise<Kept>>();
  private readonly url: URL;
  private readonly authorization: string;

  constructor(private readonly config: IntrospectionConfig) {
    this.kept = new VerifiedTokenCache(config.cacheSize);
    this.url = new URL(config.url);
    // RFC 6749 2.3.1: each part form-encoded, then Basic.
    const credentials = `${formEncode(config.clientId)}:${formEncode(config.clientSecret)}`;
    this.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }

  /** Tokens whose answer is cached (active or not). */
  get cached(): number {
    return this.kept.size;
  }

  async verify(token: string): Promise<VerifiedToken> {
    const kept = this.kept.get(token);
    const answer = kept !== undefined && kept.until > Date.now() ? kept : await this.ask(token);
    if ('refused' in answer.verdict) throw new CredentialError(answer.verdict.refused);
    return answer.verdict;
  }

  private ask(token: string): Promise<Kept> {
    const pending = this.asking.get(token);
    if (pending !== undefined) return pending;
    const asked = this.introspect(token).finally(() => this.asking.delete(token));
    this.asking.set(token, asked);
    return asked;
  }

  private async introspect(token: string): Promise<Kept> {
    const { config } = this;
    this.stats.asked++;
    let body: unknown;
    try {
      ({ body } = await fetchJson(this.url, config.timeoutMs, config.maxBytes, {
        form: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        headers: { authorization: this.authorization },
      }));
    } catch (err) {
      this.stats.failed++;
      this.stats.lastError = (err as Error).message;
      throw new CredentialUnavailableError(
        `the token introspection endpoint did not answer (${(err as Error).message})`,
      );
    }
    const now = Date.now();
    this.stats.lastError = null;
    this.stats.answeredAt = now;
    const refused = (why: string): Kept =>
      this.kept.set(token, { verdict: { refused: why }, until: now + config.negativeCacheSec * 1000 });
    const claims = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (claims['active'] !== true) return refused('the token is not active');
    const subject = claims['sub'] ?? claims['username'];
    if (typeof subject !== 'string' || subject === '') return refused('the token has no "sub" claim');
    const exp = claims['exp'];
    if (exp !== undefined && typeof exp !== 'number') return refused('the "exp" claim is not accepted');
    if (exp !== undefined && exp * 1000 <= now) return refused('the token has expired');
    if (config.audience !== undefined && !names(claims['aud'], config.audience)) {
      return refused('the "aud" claim is not accepted');
    }
    const until = Math.min(now + config.cacheSec * 1000, exp === undefined ? Infinity : exp * 1000);
    return this.kept.set(token, { verdict: { subject, claims }, until });
  }
}

function names(aud: unknown, audience: string): boolean {
  return aud === audience || (Array.isArray(aud) && aud.includes(audience));
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

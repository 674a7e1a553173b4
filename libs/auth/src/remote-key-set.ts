import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { CredentialUnavailableError } from '#broker/handshake';
import { fetchJson } from './fetch-json.js';

/** Keys are never kept longer than this, whatever the provider's cache headers say. */
const MAX_CACHE_SEC = 24 * 3600;

export interface RemoteKeySetOptions {
  /** The JWKS URL; null: read from the issuer's OpenID Connect discovery document. */
  readonly jwksUrl: URL | null;
  /** The issuer, for discovery (`<issuer>/.well-known/openid-configuration`). */
  readonly issuer: string | null;
  /** No two fetches closer than this: an unknown `kid`, a failure or a stale set waits for it. */
  readonly refreshMinSec: number;
  /** How long keys are fresh when the provider's answer has no `Cache-Control: max-age`. */
  readonly cacheSec: number;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** What the key set did, for the metrics. */
export interface RemoteKeyStats {
  fetched: number;
  failed: number;
  /** Keys in the set now (0: none ever loaded). */
  keys: number;
  /** Date.now() of the last good fetch, or null. */
  loadedAt: number | null;
  lastError: string | null;
}

/**
 * An identity provider's signing keys, fetched from its JWKS URL (or the one its OpenID Connect discovery
 * document names) and verified with jose's local key set. The fetch policy is written by hand because
 * jose's createRemoteJWKSet does not have it: the provider's `Cache-Control: max-age` decides how long
 * keys are fresh; a stale set is still used while a new copy is fetched in the background, and the last
 * good keys stay while the provider is down; an unknown `kid` fetches again at once, but never twice
 * within `refreshMinSec` (failures included), so a flood of tokens with random `kid`s costs the
 * provider at most one request per that interval.
 */
export class RemoteKeySet {
  readonly stats: RemoteKeyStats = { fetched: 0, failed: 0, keys: 0, loadedAt: null, lastError: null };
  /** Goes up each time the fetched keys differ from the ones before (tokens checked with those are not). */
  version = 0;
  private text = '';
  private local: JWTVerifyGetKey | null = null;
  private jwksUrl: URL | null;
  /** Date.now() of the last fetch started, good or not. */
  private triedAt = Number.NEGATIVE_INFINITY;
  private freshUntil = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | null = null;

  constructor(private readonly options: RemoteKeySetOptions) {
    this.jwksUrl = options.jwksUrl;
  }

  /** The key for a token's header, for jose's jwtVerify. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    // A stale set is refreshed by the verifier (refreshIfStale) before every token, cached or not.
    if (this.local === null) await this.refresh();
    const local = this.local as JWTVerifyGetKey | null;
    if (local === null) {
      throw new CredentialUnavailableError(
        `the identity provider's keys are not available (${this.stats.lastError ?? 'not fetched yet'})`,
      );
    }
    try {
      return await local(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      // A key the provider may have added since: fetched again, unless that was done a moment ago.
      await this.refresh();
      const next = this.local as JWTVerifyGetKey | null;
      if (next === null || next === local) throw err;
      return next(header, token);
    }
  };

  /** A stale set goes on being used while a new copy is fetched in the background. */
  refreshIfStale(): void {
    if (this.local !== null && Date.now() >= this.freshUntil) void this.refresh();
  }

  /** Fetches the keys again unless a fetch is under way or one started less than `refreshMinSec` ago. */
  refresh(): Promise<void> {
    if (this.pending !== null) return this.pending;
    const now = Date.now();
    if (now - this.triedAt < this.options.refreshMinSec * 1000) return Promise.resolve();
    this.triedAt = now;
    this.pending = this.load().finally(() => (this.pending = null));
    return this.pending;
  }

  /** Never rejects: a failure keeps the keys there were and is counted. */
  private async load(): Promise<void> {
    const { options, stats } = this;
    try {
      this.jwksUrl ??= await this.discover();
      const { body, maxAgeSec } = await fetchJson(this.jwksUrl, options.timeoutMs, options.maxBytes);
      const set = body as JSONWebKeySet;
      if (!Array.isArray(set?.keys)) throw new Error('the answer is not a JSON Web Key Set');
      this.local = createLocalJWKSet(set);
      const text = JSON.stringify(set.keys);
      if (text !== this.text) this.version++;
      this.text = text;
      const freshSec = Math.min(
        MAX_CACHE_SEC,
        Math.max(options.refreshMinSec, maxAgeSec ?? options.cacheSec),
      );
      this.freshUntil = Date.now() + freshSec * 1000;
      stats.fetched++;
      stats.keys = set.keys.length;
      stats.loadedAt = Date.now();
      stats.lastError = null;
    } catch (err) {
      stats.failed++;
      stats.lastError = (err as Error).message;
    }
  }

  /** The JWKS URL from the issuer's discovery document, which must name the same issuer (OIDC Discovery 4.3). */
  private async discover(): Promise<URL> {
    const issuer = this.options.issuer;
    if (issuer === null) throw new Error('no JWKS URL and no issuer to discover it from');
    const url = new URL(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
    const { body } = await fetchJson(url, this.options.timeoutMs, this.options.maxBytes);
    const document = body as { issuer?: unknown; jwks_uri?: unknown };
    if (document?.issuer !== issuer) throw new Error('the discovery document names another issuer');
    if (typeof document.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
    return new URL(document.jwks_uri);
  }
}

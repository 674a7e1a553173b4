import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { CredentialError, CredentialUnavailableError } from '#broker/handshake';
import { type JwtConfig, JWKS_DEFAULTS } from '#broker/config';
import { checkClaims, checkNumericDates, REQUIRED_CLAIMS } from './check-claims.js';
import { assertCompactForm } from './compact-jws.js';
import { RemoteKeySet, type RemoteKeyStats } from './remote-key-set.js';
import { verifyHs256 } from './verify-hs256.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

export interface VerifiedToken {
  readonly subject: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

type Key = Uint8Array | KeyObject | JWTVerifyGetKey;

/** The asymmetric algorithms accepted unless `jwt.algorithms` says otherwise. */
const ASYMMETRIC = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];

/** HS256 alone is verified synchronously (see verify-hs256.ts); every other case goes through jose. */
interface FastPath {
  readonly hs256: KeyObject;
}

/**
 * Verifies JWTs with jose: HS256 with a shared secret, RS/ES/EdDSA with a PEM public key, a local JWKS
 * file, or an identity provider's keys (a JWKS URL, or OpenID Connect discovery; see remote-key-set.ts).
 * A local key is imported once at boot, not per handshake. Error messages name what failed
 * (expired, not yet valid, bad signature) and never contain the token.
 */
export class JwtVerifier {
  private readonly verified: VerifiedTokenCache<VerifiedToken>;
  /** The remote key set's version the cached tokens were checked against. */
  private keysVersion = 0;

  private constructor(
    private readonly key: Key | null,
    private readonly config: JwtConfig | undefined,
    private readonly algorithms: string[],
    private readonly fast: FastPath | null = null,
    private readonly remote: RemoteKeySet | null = null,
  ) {
    this.verified = new VerifiedTokenCache(config === undefined ? 0 : config.verifiedCacheSize);
  }

  static async create(config: JwtConfig | undefined): Promise<JwtVerifier> {
    if (config === undefined) return new JwtVerifier(null, config, []);
    if (config.secret !== undefined) {
      const algorithms = config.algorithms ?? ['HS256'];
      const fast =
        algorithms.length === 1 && algorithms[0] === 'HS256'
          ? { hs256: createSecretKey(Buffer.from(config.secret)) }
          : null;
      // jose imports a raw secret per algorithm, so HS384/HS512 lists work too.
      const key = new TextEncoder().encode(config.secret);
      return new JwtVerifier(key, config, algorithms, fast);
    }
    if (config.publicKeyFile !== undefined) {
      const key = createPublicKey(readFileSync(config.publicKeyFile, 'utf8'));
      return new JwtVerifier(key, config, config.algorithms ?? ASYMMETRIC);
    }
    if (config.jwksFile !== undefined) {
      const jwks = createLocalJWKSet(JSON.parse(readFileSync(config.jwksFile, 'utf8')));
      return new JwtVerifier(jwks, config, config.algorithms ?? ASYMMETRIC);
    }
    if (config.jwksUrl !== undefined || config.discovery === true) {
      const remote = new RemoteKeySet({
        jwksUrl: config.jwksUrl === undefined ? null : new URL(config.jwksUrl),
        issuer: config.issuer ?? null,
        ...(config.jwks ?? JWKS_DEFAULTS),
      });
      // Fetched before the first handshake; a provider down at boot is tried again as tokens come.
      await remote.refresh();
      return new JwtVerifier(remote.getKey, config, config.algorithms ?? ASYMMETRIC, null, remote);
    }
    return new JwtVerifier(null, config, []);
  }

  /** What the identity provider's key set did (fetches, failures, keys), or null without one. */
  get remoteKeys(): RemoteKeyStats | null {
    return this.remote?.stats ?? null;
  }

  async verify(token: string): Promise<VerifiedToken> {
    if (this.key === null || this.config === undefined) {
      throw new CredentialError('no token verifier is configured');
    }
    const nowSec = Math.floor(Date.now() / 1000);
    // A token verified before is not checked against the keys again: their freshness is looked at here.
    this.remote?.refreshIfStale();
    if (this.remote !== null && this.remote.version !== this.keysVersion) {
      // The provider's keys changed: a token checked with a key now gone is not valid any more.
      this.verified.clear();
      this.keysVersion = this.remote.version;
    }
    const known = this.verified.get(token);
    if (known !== undefined) {
      // The signature was checked when it was kept; time moves on, so the claims are checked again.
      checkClaims(known.claims, this.config, nowSec);
      return known;
    }
    return this.verified.set(token, await this.verifySignedToken(token, this.config, nowSec));
  }

  private async verifySignedToken(token: string, config: JwtConfig, nowSec: number): Promise<VerifiedToken> {
    if (this.fast !== null) {
      const claims = verifyHs256(token, this.fast.hs256);
      checkClaims(claims, config, nowSec);
      return withSubject(claims);
    }
    try {
      assertCompactForm(token);
      const { payload } = await jwtVerify(token, this.key as Parameters<typeof jwtVerify>[1], {
        algorithms: this.algorithms,
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: config.clockToleranceSec,
        requiredClaims: REQUIRED_CLAIMS,
      });
      checkNumericDates(payload, config, nowSec);
      return withSubject(payload);
    } catch (err) {
      // The provider's keys cannot be had now: not the token's fault.
      if (err instanceof CredentialUnavailableError) throw err;
      throw toCredentialError(err);
    }
  }
}

function withSubject(claims: Record<string, unknown>): VerifiedToken {
  const { sub } = claims;
  if (typeof sub !== 'string' || sub === '') throw new CredentialError('the token has no "sub" claim');
  return { subject: sub, claims };
}

function toCredentialError(err: unknown): CredentialError {
  if (err instanceof CredentialError) return err;
  if (err instanceof errors.JWTExpired) return new CredentialError('the token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return new CredentialError(`the token has no "${err.claim}" claim`);
    return new CredentialError(
      err.claim === 'nbf' ? 'the token is not yet valid' : `the "${err.claim}" claim is not accepted`,
    );
  }
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return new CredentialError('the signature is invalid');
  if (err instanceof errors.JOSEAlgNotAllowed)
    return new CredentialError('the signing algorithm is not allowed');
  if (err instanceof errors.JWKSNoMatchingKey) return new CredentialError('no key matches the token');
  return new CredentialError('the token is malformed');
}

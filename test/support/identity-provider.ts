import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A signing key of the provider: its private half signs, its public half is published under `kid`. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: PrivateKey;
  readonly jwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/**
 * An OpenID Connect provider's public side on loopback, as the broker sees one: a discovery document
 * and a JWKS URL whose keys the test rotates, with its cache headers; it counts what it is asked and
 * can be taken down (503) and brought back.
 */
export class IdentityProvider {
  /** The keys published now. */
  published: SigningKey[] = [];
  maxAgeSec = 300;
  down = false;
  /** Set: the discovery document names this issuer instead (a misconfigured or spoofed provider). */
  claimedIssuer: string | null = null;
  /** Bytes of padding in the key set's answer (a provider answering far more than a key set). */
  padding = 0;
  readonly requests = { discovery: 0, jwks: 0 };

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  static async start(): Promise<IdentityProvider> {
    let provider: IdentityProvider | null = null;
    const server = createServer((req, res) => provider?.answer(req.url ?? '', res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    provider = new IdentityProvider(server, `http://127.0.0.1:${port}/realms/test`);
    return provider;
  }

  get jwksUrl(): string {
    return `${this.issuer}/protocol/openid-connect/certs`;
  }

  /** A token for `sub` signed with `key` (its `kid` in the header), from this issuer. */
  sign(key: SigningKey, sub = 'device-1', kid = key.kid): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid })
      .setSubject(sub)
      .setIssuer(this.issuer)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key.privateKey);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, res: import('node:http').ServerResponse): void {
    if (this.down) {
      res.writeHead(503).end();
      return;
    }
    if (url === '/realms/test/.well-known/openid-configuration') {
      this.requests.discovery++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: this.claimedIssuer ?? this.issuer, jwks_uri: this.jwksUrl }));
      return;
    }
    if (url === '/realms/test/protocol/openid-connect/certs') {
      this.requests.jwks++;
      res.writeHead(200, {
        'content-type': 'application/jwk-set+json',
        'cache-control': `public, max-age=${this.maxAgeSec}`,
      });
      const keys = this.published.map((key) => key.jwk);
      res.end(JSON.stringify(this.padding === 0 ? { keys } : { keys, padding: 'x'.repeat(this.padding) }));
      return;
    }
    res.writeHead(404).end();
  }
}

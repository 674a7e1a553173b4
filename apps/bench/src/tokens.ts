import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTHeaderParameters, SignJWT } from 'jose';

/** How the broker checks the tokens: its `jwt` config section, and how the tokens are signed. */
export interface TokenKeys {
  readonly jwt: object;
  sign(count: number): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Distinct tokens (one subject each), as many clients would bring. A broker that cached verified tokens
 * would still hit once they all had been seen: raise the count to measure one.
 */
function signMany(
  count: number,
  header: JWTHeaderParameters,
  key: Parameters<SignJWT['sign']>[0],
): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      new SignJWT({}).setProtectedHeader(header).setSubject(`bench-${i}`).setExpirationTime('1h').sign(key),
    ),
  );
}

/** HS256 with a shared secret. */
export function secretKeys(secret: string): TokenKeys {
  const key = new TextEncoder().encode(secret);
  return {
    jwt: { secret },
    sign: (count) => signMany(count, { alg: 'HS256' }, key),
    close: () => Promise.resolve(),
  };
}

/**
 * ES256, the public key published at a JWKS URL that this process serves (Cache-Control max-age an
 * hour: the broker fetches it once, at boot), as an identity provider's would be.
 */
export async function jwksKeys(): Promise<TokenKeys> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256' }] });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
    res.end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwt: { jwksUrl: `http://127.0.0.1:${port}/jwks` },
    sign: (count) => signMany(count, { alg: 'ES256', kid: 'bench' }, privateKey),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

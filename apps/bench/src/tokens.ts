import { SignJWT } from 'jose';

/**
 * Distinct HS256 tokens (one subject each), as many clients would bring. A broker that cached
 * verified tokens would still hit once they all had been seen: raise the count to measure one.
 */
export async function signTokens(secret: string, count: number): Promise<string[]> {
  const key = new TextEncoder().encode(secret);
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(`bench-${i}`)
        .setExpirationTime('1h')
        .sign(key),
    ),
  );
}

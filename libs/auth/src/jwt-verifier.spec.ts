import { describe, it, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, type KeyObject, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { CredentialError } from '#broker/handshake';
import { type JwtConfig } from '#broker/config';
import { JwtVerifier } from './jwt-verifier.js';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

const SECRET = 'a-shared-secret-of-at-least-32-characters!';
const OTHER_SECRET = 'another-shared-secret-of-32-characters-or-more';
const ISSUER = 'https://issuer.example';
const AUDIENCE = 'ws-broker';

function config(fields: Partial<JwtConfig>): JwtConfig {
  return { clockToleranceSec: 5, maxLifetimeSec: 0, verifiedCacheSize: 16, ...fields };
}

function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}

function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

async function hs256(
  payload: JWTPayload,
  secret = SECRET,
  header: Record<string, unknown> = {},
): Promise<string> {
  // Tokens expire unless a test says otherwise (`exp: undefined` leaves the claim out).
  const claims = 'exp' in payload ? payload : { ...payload, exp: Math.floor(Date.now() / 1000) + 300 };
  return new SignJWT(JSON.parse(JSON.stringify(claims)) as JWTPayload)
    .setProtectedHeader({ ...header, alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));
}

/** Signs by hand, for headers and claims that SignJWT refuses to produce. */
function signRaw(header: Record<string, unknown>, payload: unknown, secret = SECRET): string {
  const body = `${b64url(header)}.${b64url(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/** Asserts a CredentialError whose message matches `pattern` and does not echo the token. */
async function assertRefused(verifier: JwtVerifier, token: string, pattern: RegExp): Promise<void> {
  await assert.rejects(
    async () => verifier.verify(token),
    (err: unknown) => {
      assert.ok(err instanceof CredentialError, `expected a CredentialError, got ${String(err)}`);
      assert.match(err.message, pattern);
      if (token.length >= 4) assert.ok(!err.message.includes(token), 'the message echoes the token');
      for (const segment of token.split('.')) {
        if (segment.length >= 8) assert.ok(!err.message.includes(segment), 'the message echoes a token part');
      }
      return true;
    },
  );
}

/**
 * The same behaviour is required whether HS256 is the only algorithm (the default) or one of a
 * configured list, whatever path the implementation takes for each.
 */
const HS256_CONFIGS: readonly (readonly [string, Partial<JwtConfig>])[] = [
  ['default algorithms', {}],
  ['algorithms [HS384, HS256]', { algorithms: ['HS384', 'HS256'] }],
];

for (const [label, extra] of HS256_CONFIGS) {
  describe(`JwtVerifier with an HS256 secret, ${label}`, () => {
    let verifier: JwtVerifier;
    before(async () => {
      verifier = await JwtVerifier.create(config({ secret: SECRET, ...extra }));
    });

    it('accepts a good token and returns the subject and every claim', async () => {
      const iat = nowSec();
      const token = await hs256({ sub: 'alice', role: 'admin', iat, exp: iat + 300 });
      const verified = await verifier.verify(token);
      assert.equal(verified.subject, 'alice');
      assert.deepEqual({ ...verified.claims }, { sub: 'alice', role: 'admin', iat, exp: iat + 300 });
    });

    it('refuses a token without exp: a credential that never expires is not accepted', async () => {
      await assertRefused(verifier, await hs256({ sub: 'bob', exp: undefined }), /"exp"/);
    });

    it('accepts a token with exp and without nbf', async () => {
      const verified = await verifier.verify(await hs256({ sub: 'bob', exp: nowSec() + 60 }));
      assert.equal(verified.subject, 'bob');
    });

    it('refuses a token that expired beyond the clock tolerance', async () => {
      await assertRefused(verifier, await hs256({ sub: 'alice', exp: nowSec() - 60 }), /expired/);
    });

    it('refuses a token whose exp is exactly now minus the tolerance', async () => {
      await assertRefused(verifier, await hs256({ sub: 'alice', exp: nowSec() - 5 }), /expired/);
    });

    it('accepts a token that expired within the clock tolerance', async () => {
      const lenient = await JwtVerifier.create(config({ secret: SECRET, ...extra, clockToleranceSec: 60 }));
      const token = await hs256({ sub: 'alice', exp: nowSec() - 20 });
      assert.equal((await lenient.verify(token)).subject, 'alice');
      await assertRefused(verifier, token, /expired/);
    });

    it('refuses a token whose nbf is in the future beyond the tolerance', async () => {
      await assertRefused(verifier, await hs256({ sub: 'alice', nbf: nowSec() + 120 }), /not yet valid/);
    });

    it('accepts a token whose nbf is in the future within the tolerance', async () => {
      const lenient = await JwtVerifier.create(config({ secret: SECRET, ...extra, clockToleranceSec: 60 }));
      const token = await hs256({ sub: 'alice', nbf: nowSec() + 20 });
      assert.equal((await lenient.verify(token)).subject, 'alice');
      await assertRefused(verifier, token, /not yet valid/);
    });

    // jose refuses these (RFC 7519 NumericDate); SignJWT will not produce them, so they are signed by hand.
    for (const [claim, value, pattern] of [
      ['exp', String(nowSec() + 300), /"exp"/],
      ['exp', null, /"exp"/],
      ['nbf', 'yesterday', /"nbf"|not yet valid/],
      ['iat', 'yesterday', /"iat"/],
      ['iat', true, /"iat"/],
    ] as const) {
      it(`refuses a non-numeric ${claim} claim (${JSON.stringify(value)})`, async () => {
        await assertRefused(
          verifier,
          signRaw({ alg: 'HS256' }, { sub: 'alice', exp: nowSec() + 300, [claim]: value }),
          pattern,
        );
      });
    }

    // JSON's 1e400 parses as Infinity: a number, so a plain type check would let it never expire.
    for (const [claim, literal] of [
      ['exp', '1e400'],
      ['nbf', '-1e400'],
      ['iat', '1e400'],
    ] as const) {
      it(`refuses a non-finite ${claim} claim (${literal})`, async () => {
        const exp = claim === 'exp' ? literal : String(nowSec() + 300);
        const extra = claim === 'exp' ? '' : `,"${claim}":${literal}`;
        await assertRefused(
          verifier,
          signRaw({ alg: 'HS256' }, `{"sub":"alice","exp":${exp}${extra}}`),
          new RegExp(`"${claim}"`),
        );
      });
    }

    it('refuses a token signed with another secret', async () => {
      await assertRefused(verifier, await hs256({ sub: 'alice' }, OTHER_SECRET), /signature/);
    });

    it('refuses a token whose payload was changed after signing', async () => {
      const token = await hs256({ sub: 'alice', role: 'user' });
      const [header, , signature] = token.split('.');
      const forged = `${header}.${b64url({ sub: 'alice', role: 'admin' })}.${signature}`;
      await assertRefused(verifier, forged, /signature/);
    });

    it('refuses a token whose signature was truncated or emptied', async () => {
      const token = await hs256({ sub: 'alice' });
      await assertRefused(verifier, token.slice(0, -4), /signature|malformed/);
      await assertRefused(verifier, token.slice(0, token.lastIndexOf('.') + 1), /signature|malformed/);
    });

    it('refuses an exp past the year 9999 (1e308), and one beyond maxLifetimeSec when that is set', async () => {
      await assertRefused(verifier, signRaw({ alg: 'HS256' }, { sub: 'alice', exp: 1e308 }), /"exp"/);
      const bounded = await JwtVerifier.create(config({ secret: SECRET, ...extra, maxLifetimeSec: 3600 }));
      await assertRefused(bounded, await hs256({ sub: 'alice', exp: nowSec() + 7200 }), /longer than/);
      assert.equal(
        (await bounded.verify(await hs256({ sub: 'alice', exp: nowSec() + 1800 }))).subject,
        'alice',
      );
    });

    it('refuses a signature whose last character differs only in bits base64url leaves unused', async () => {
      const token = await hs256({ sub: 'alice' });
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(token.at(-1) as string);
      // 32 bytes are 43 characters: the last one carries 2 of its 6 bits.
      const twin = `${token.slice(0, -1)}${alphabet[last ^ 1]}`;
      assert.deepEqual(
        Buffer.from(twin.split('.')[2] as string, 'base64url'),
        Buffer.from(token.split('.')[2] as string, 'base64url'),
      );
      await assertRefused(verifier, twin, /malformed/);
    });

    it('refuses malformed strings with a CredentialError saying so', async () => {
      const payload = b64url({ sub: 'alice' });
      const malformed = [
        '',
        'a.b',
        'a.b.c',
        'not a token at all',
        '!!!!.@@@@.####',
        `${b64url('"a string header"')}.${payload}.c2ln`,
        `${b64url('[1,2]')}.${payload}.c2ln`,
        `${b64url('null')}.${payload}.c2ln`,
        `${b64url('{"alg":"HS256"')}.${payload}.c2ln`,
        `${b64url({ alg: 'HS256' })}.${payload}.c2ln.extra`,
        `${b64url({ alg: 'HS256' })}.${payload}.c2ln.x.y`,
        '..',
        '...',
      ];
      for (const token of malformed) {
        await assertRefused(verifier, token, /malformed/);
      }
    });

    it('refuses a correctly signed token whose payload is not a JSON object', async () => {
      for (const payload of ['[1]', '"alice"', '42', 'not json']) {
        await assertRefused(verifier, signRaw({ alg: 'HS256' }, payload), /malformed|invalid|not accepted/);
      }
    });

    it('refuses a correctly signed token whose header or payload is not valid UTF-8', async () => {
      const sign = (header: Buffer, payload: Buffer): string => {
        const body = `${header.toString('base64url')}.${payload.toString('base64url')}`;
        return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
      };
      const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
      const badPayload = Buffer.concat([
        Buffer.from('{"sub":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      const badHeader = Buffer.concat([
        Buffer.from('{"alg":"HS256","x":"'),
        Buffer.from([0xc3]),
        Buffer.from('"}'),
      ]);
      await assertRefused(verifier, sign(json({ alg: 'HS256' }), badPayload), /malformed/);
      await assertRefused(verifier, sign(badHeader, json({ sub: 'alice' })), /malformed/);
    });

    it('refuses a token without a usable "sub" claim', async () => {
      await assertRefused(verifier, await hs256({ role: 'admin' }), /"sub"/);
      await assertRefused(verifier, await hs256({ sub: '' }), /"sub"/);
    });

    it('refuses an unsigned alg:none token', async () => {
      const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: 'alice' })}.`;
      await assertRefused(verifier, unsigned, /algorithm|malformed|signature/);
    });

    it('refuses alg:none even when the configuration lists it', async () => {
      const careless = await JwtVerifier.create(config({ secret: SECRET, algorithms: ['HS256', 'none'] }));
      const unsigned = `${b64url({ alg: 'none' })}.${b64url({ sub: 'alice' })}.`;
      await assertRefused(careless, unsigned, /./);
    });

    it('refuses a token with an unknown critical header', async () => {
      const token = signRaw({ alg: 'HS256', crit: ['x-custom'], 'x-custom': 1 }, { sub: 'alice' });
      await assertRefused(verifier, token, /./);
    });

    it('accepts a hand-signed token, so the raw signer above is sound', async () => {
      const verified = await verifier.verify(
        signRaw({ alg: 'HS256', typ: 'JWT' }, { sub: 'ivy', n: 1, exp: nowSec() + 300 }),
      );
      assert.equal(verified.subject, 'ivy');
      assert.equal(verified.claims['n'], 1);
    });

    it('refuses an RS256 token (algorithm not configured)', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
      await assertRefused(verifier, token, /algorithm/);
    });

    it('refuses an HS512 token signed with the same secret', async () => {
      const token = await new SignJWT({ sub: 'alice' })
        .setProtectedHeader({ alg: 'HS512' })
        .sign(new TextEncoder().encode(SECRET));
      await assertRefused(verifier, token, /algorithm/);
    });
  });
}

describe('JwtVerifier issuer and audience', () => {
  let verifier: JwtVerifier;
  before(async () => {
    verifier = await JwtVerifier.create(config({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE }));
  });

  it('accepts a token with the configured issuer and audience', async () => {
    const verified = await verifier.verify(await hs256({ sub: 'alice', iss: ISSUER, aud: AUDIENCE }));
    assert.equal(verified.subject, 'alice');
    assert.equal(verified.claims['iss'], ISSUER);
  });

  it('accepts an audience array that contains the configured audience', async () => {
    const token = await hs256({ sub: 'alice', iss: ISSUER, aud: ['other', AUDIENCE] });
    assert.equal((await verifier.verify(token)).subject, 'alice');
  });

  it('refuses another or a missing issuer, naming "iss"', async () => {
    await assertRefused(
      verifier,
      await hs256({ sub: 'alice', iss: 'https://evil.example', aud: AUDIENCE }),
      /"iss"/,
    );
    await assertRefused(verifier, await hs256({ sub: 'alice', aud: AUDIENCE }), /"iss"/);
  });

  it('refuses another or a missing audience, naming "aud"', async () => {
    await assertRefused(verifier, await hs256({ sub: 'alice', iss: ISSUER, aud: 'other' }), /"aud"/);
    await assertRefused(verifier, await hs256({ sub: 'alice', iss: ISSUER, aud: ['a', 'b'] }), /"aud"/);
    await assertRefused(verifier, await hs256({ sub: 'alice', iss: ISSUER }), /"aud"/);
  });

  it('ignores iss and aud when none is configured', async () => {
    const plain = await JwtVerifier.create(config({ secret: SECRET }));
    const token = await hs256({ sub: 'alice', iss: 'anyone', aud: 'anything' });
    assert.equal((await plain.verify(token)).subject, 'alice');
  });
});

describe('JwtVerifier remembers verified tokens', () => {
  after(() => mock.timers.reset());

  it('refuses a remembered token once it expires: the claims are checked again at every use', async () => {
    const verifier = await JwtVerifier.create(config({ secret: SECRET, clockToleranceSec: 0 }));
    const token = await hs256({ sub: 'alice', exp: nowSec() + 60 });
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      assert.equal((await verifier.verify(token)).subject, 'alice');
      assert.equal((await verifier.verify(token)).subject, 'alice');
      mock.timers.tick(61_000);
      await assertRefused(verifier, token, /expired/);
    } finally {
      mock.timers.reset();
    }
  });

  it('does the same for a token verified by jose (RS256)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-cache-'));
    try {
      const { publicKey, privateKey } = await generateKeyPair('RS256');
      const file = join(dir, 'rsa.pem');
      writeFileSync(file, await exportSPKI(publicKey));
      const verifier = await JwtVerifier.create(config({ publicKeyFile: file, clockToleranceSec: 0 }));
      const token = await new SignJWT({ sub: 'carol', exp: nowSec() + 60 })
        .setProtectedHeader({ alg: 'RS256' })
        .sign(privateKey);
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      assert.equal((await verifier.verify(token)).subject, 'carol');
      mock.timers.tick(61_000);
      await assertRefused(verifier, token, /expired/);
    } finally {
      mock.timers.reset();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves only the exact token: a changed signature is checked, and refused', async () => {
    const verifier = await JwtVerifier.create(config({ secret: SECRET }));
    const token = await hs256({ sub: 'alice' });
    await verifier.verify(token);
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    const forged = `${token.slice(0, -2)}${last}${token.slice(-1)}`;
    await assertRefused(verifier, forged, /signature|malformed/);
    await assertRefused(verifier, `${token}x`, /signature|malformed/);
  });

  it('hands out claims that no connection can change for the others', async () => {
    const verifier = await JwtVerifier.create(config({ secret: SECRET }));
    const token = await hs256({ sub: 'alice', scope: ['read'] });
    const first = await verifier.verify(token);
    assert.throws(() => (first.claims['scope'] as string[]).push('admin'), TypeError);
    assert.deepEqual((await verifier.verify(token)).claims['scope'], ['read']);
  });

  it('verifies every time with verifiedCacheSize 0, with the same answers', async () => {
    const verifier = await JwtVerifier.create(config({ secret: SECRET, verifiedCacheSize: 0 }));
    const token = await hs256({ sub: 'alice' });
    assert.equal((await verifier.verify(token)).subject, 'alice');
    assert.equal((await verifier.verify(token)).subject, 'alice');
  });
});

describe('JwtVerifier with public keys', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'jwt-verifier-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function rsaVerifier(): Promise<{ verifier: JwtVerifier; pem: string; privateKey: PrivateKey }> {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const pem = await exportSPKI(publicKey);
    const file = join(dir, `rsa-${Math.random().toString(36).slice(2)}.pem`);
    writeFileSync(file, pem);
    return { verifier: await JwtVerifier.create(config({ publicKeyFile: file })), pem, privateKey };
  }

  it('verifies RS256 with publicKeyFile', async () => {
    const { verifier, privateKey } = await rsaVerifier();
    const token = await new SignJWT({ sub: 'carol' })
      .setProtectedHeader({ alg: 'RS256' })
      .setExpirationTime('5m')
      .sign(privateKey);
    assert.equal((await verifier.verify(token)).subject, 'carol');
  });

  it('refuses an RS256 token whose exp is 1e400 (Infinity): jose takes it for a number', async () => {
    const { verifier, privateKey } = await rsaVerifier();
    const body = `${b64url({ alg: 'RS256' })}.${b64url('{"sub":"carol","exp":1e400}')}`;
    const signature = sign('sha256', Buffer.from(body), privateKey as unknown as KeyObject).toString(
      'base64url',
    );
    await assertRefused(verifier, `${body}.${signature}`, /"exp"/);
  });

  it('refuses an HS256 token signed with the public key PEM as secret (algorithm confusion)', async () => {
    const { verifier, pem } = await rsaVerifier();
    const confused = await new SignJWT({ sub: 'mallory' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(pem));
    await assertRefused(verifier, confused, /algorithm|malformed|signature/);
  });

  it('refuses an HS256 token even when the configuration lists HS256 next to a public key', async () => {
    const { pem } = await rsaVerifier();
    const file = join(dir, 'confused.pem');
    writeFileSync(file, pem);
    const careless = await JwtVerifier.create(
      config({ publicKeyFile: file, algorithms: ['RS256', 'HS256'] }),
    );
    const confused = await new SignJWT({ sub: 'mallory' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(pem));
    await assertRefused(careless, confused, /./);
  });

  it('refuses an RS256 token against an HS256 secret configuration', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: 'carol' }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    const hmac = await JwtVerifier.create(config({ secret: SECRET }));
    await assertRefused(hmac, token, /algorithm|malformed|signature/);
  });

  it('verifies ES256 with publicKeyFile and refuses a token from another key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const other = await generateKeyPair('ES256');
    const file = join(dir, 'ec.pem');
    writeFileSync(file, await exportSPKI(publicKey));
    const verifier = await JwtVerifier.create(config({ publicKeyFile: file }));

    const good = await new SignJWT({ sub: 'dave', scope: 'chat' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(privateKey);
    const verified = await verifier.verify(good);
    assert.equal(verified.subject, 'dave');
    assert.equal(verified.claims['scope'], 'chat');

    const forged = await new SignJWT({ sub: 'dave' })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(other.privateKey);
    await assertRefused(verifier, forged, /signature/);
  });

  it('applies exp and sub checks on the public-key path too', async () => {
    const { verifier, privateKey } = await rsaVerifier();
    const expired = await new SignJWT({ sub: 'carol', exp: nowSec() - 60 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(privateKey);
    await assertRefused(verifier, expired, /expired/);
    const anonymous = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setExpirationTime('5m')
      .sign(privateKey);
    await assertRefused(verifier, anonymous, /"sub"/);
  });

  it('refuses malformed strings on the public-key path with the same message', async () => {
    const { verifier } = await rsaVerifier();
    for (const token of [
      '',
      'a.b',
      'a.b.c',
      '!!!!.@@@@.####',
      `${b64url('"x"')}.${b64url({ sub: 'a' })}.c2ln`,
    ]) {
      await assertRefused(verifier, token, /malformed/);
    }
  });

  it('verifies RS256 through jwksFile, choosing the key by kid', async () => {
    const first = await generateKeyPair('RS256');
    const second = await generateKeyPair('RS256');
    const jwks = {
      keys: [
        { ...(await exportJWK(first.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' },
        { ...(await exportJWK(second.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' },
      ],
    };
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify(jwks));
    const verifier = await JwtVerifier.create(config({ jwksFile: file }));

    const sign = (kid: string, key: PrivateKey): Promise<string> =>
      new SignJWT({ sub: `user-${kid}` })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setExpirationTime('5m')
        .sign(key);

    assert.equal((await verifier.verify(await sign('k1', first.privateKey))).subject, 'user-k1');
    assert.equal((await verifier.verify(await sign('k2', second.privateKey))).subject, 'user-k2');
    await assertRefused(verifier, await sign('k2', first.privateKey), /signature/);
    await assertRefused(verifier, await sign('k3', first.privateKey), /no key/);

    const confused = await new SignJWT({ sub: 'mallory' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new TextEncoder().encode(SECRET));
    await assertRefused(verifier, confused, /./);
  });
});

describe('JwtVerifier without keys', () => {
  it('create(undefined) gives a verifier that refuses every token', async () => {
    const verifier = await JwtVerifier.create(undefined);
    await assertRefused(verifier, await hs256({ sub: 'alice' }), /no token verifier/);
    await assertRefused(verifier, '', /no token verifier/);
  });

  it('a configuration with claims rules but no key refuses every token', async () => {
    const verifier = await JwtVerifier.create(config({ issuer: ISSUER }));
    await assertRefused(verifier, await hs256({ sub: 'alice', iss: ISSUER }), /no token verifier/);
  });
});

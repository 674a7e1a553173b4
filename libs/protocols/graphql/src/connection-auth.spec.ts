import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authenticateFirstMessage } from '#broker/gateway';
import { CredentialError, type Principal } from '#broker/handshake';
import { authenticateInit, type InitAuthContext } from './connection-auth.js';

const handshakeUser: Principal = { subject: 'hs-user', claims: { sub: 'hs-user' }, carrier: 'header' };

function context(
  authMode: InitAuthContext['authMode'],
  principal: Principal | null = null,
): InitAuthContext & { seen: string[] } {
  const seen: string[] = [];
  const checks = {
    // The real verifier (jose) has its own spec and the e2e suites; here it only answers.
    verifyToken: async (token: string): Promise<Principal> => {
      seen.push(token);
      if (token === 'good') return { subject: 'alice', claims: { sub: 'alice' }, carrier: 'first-message' };
      throw new CredentialError('the token has expired');
    },
    passwords: null,
  };
  const endpoint = { mode: authMode, path: '/graphql', timeoutMs: 5000 };
  return {
    authMode,
    seen,
    authenticate: (credential) => authenticateFirstMessage(credential, principal, endpoint, checks),
  };
}

describe('authenticateInit', () => {
  it('a valid token in token or authorization (Bearer, any case) gives its principal; the credential leaves the params', async () => {
    for (const payload of [
      { token: 'good', room: 1 },
      { Authorization: 'Bearer good', room: 1 },
      { authorization: 'bearer  good', room: 1 },
    ]) {
      const ctx = context('required');
      const outcome = await authenticateInit(payload, ctx);
      assert.deepEqual(outcome, {
        ok: true,
        principal: { subject: 'alice', claims: { sub: 'alice' }, carrier: 'first-message' },
        params: { room: 1 },
      });
      assert.deepEqual(ctx.seen, ['good']);
    }
  });

  it('a bad token is refused with the verifier reason, in optional and required modes, even after a handshake principal', async () => {
    for (const mode of ['optional', 'required'] as const) {
      assert.deepEqual(await authenticateInit({ token: 'old' }, context(mode, handshakeUser)), {
        ok: false,
        reason: 'the token was not accepted: the token has expired',
      });
    }
  });

  it('malformed credentials are refused without reaching the verifier', async () => {
    for (const payload of [
      { token: 42 },
      { token: '' },
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { token: 'good', authorization: 'Bearer good' },
    ]) {
      const ctx = context('optional');
      const outcome = await authenticateInit(payload, ctx);
      assert.equal(outcome.ok, false, JSON.stringify(payload));
      assert.deepEqual(ctx.seen, []);
    }
  });

  it('no token: required needs the handshake principal; optional passes anonymous', async () => {
    assert.deepEqual(await authenticateInit({}, context('required')), {
      ok: false,
      reason: 'a credential is required: put a token in the connection_init payload',
    });
    assert.deepEqual(await authenticateInit(undefined, context('required', handshakeUser)), {
      ok: true,
      principal: handshakeUser,
      params: {},
    });
    assert.deepEqual(await authenticateInit(null, context('optional')), {
      ok: true,
      principal: null,
      params: {},
    });
  });

  it("mode 'none' reads no credential but still strips it", async () => {
    const ctx = context('none');
    assert.deepEqual(await authenticateInit({ token: 'good', a: 'b' }, ctx), {
      ok: true,
      principal: null,
      params: { a: 'b' },
    });
    assert.deepEqual(ctx.seen, []);
  });
});

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { connect, type PeerCertificate } from 'node:tls';
import { Ocpp16Module, OcppRepositories } from '#broker/protocols/ocpp16';
import WebSocket from 'ws';
import { TestCertificateAuthority, type IssuedCertificate } from './support/certificate-authority.js';
import { http2WebSocket } from './support/http2-websocket.js';
import { BOOT, chargePoint, OCPP_ENDPOINT, refusal } from './support/ocpp.js';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { opened, waitFor } from './support/ws-helpers.js';

/** The charge point's side of TLS: its certificate, if any; the broker's own is self-signed. */
function tlsOptions(certificate?: IssuedCertificate): WebSocket.ClientOptions {
  return {
    rejectUnauthorized: false,
    ...(certificate
      ? { cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) }
      : {}),
  };
}

const OPEN = { path: '/open/:chargePointId', subprotocols: ['ocpp1.6'], defaultModule: 'ocpp1.6' };
const CPO = { path: '/cpo/:chargePointId', subprotocols: ['ocpp1.6'], defaultModule: 'ocpp1.6' };

describe('ocpp1.6 security profile 3 (TLS client certificates)', () => {
  const authority = new TestCertificateAuthority('Charging CA');
  const stranger = new TestCertificateAuthority('Someone else');
  let broker: TestBroker;

  before(async () => {
    const server = selfSignedCertificate();
    broker = await startTestBroker(
      {
        tls: { ...server, caFile: authority.caFile },
        http: { http2: true },
        endpoints: [OCPP_ENDPOINT, OPEN, CPO],
        ocpp: {
          allowUnknownChargePoints: false,
          securityProfile: 3,
          endpoints: [
            { path: OPEN.path, allowUnknownChargePoints: true, securityProfile: 0 },
            { path: CPO.path, certificateOrganization: 'Acme Charging' },
          ],
        },
      },
      [Ocpp16Module],
    );
    const { chargePoints } = broker.app.get(OcppRepositories);
    await chargePoints.create({ identity: 'CP-1', allowed: true, password: null }, 'test');
    // A key stored from profile 2 days: profile 3 has no Basic auth, so it is not asked for.
    await chargePoints.create({ identity: 'CP-2', allowed: true, password: 'key-0123456789abcdef' }, 'test');
    await chargePoints.create({ identity: 'CP-banned', allowed: false, password: null }, 'test');
  });
  after(() => broker.close());

  it('a certificate from the configured CA naming the identity opens the session', async () => {
    const client = chargePoint(broker.url, 'CP-1', { wsOpts: tlsOptions(authority.issue('CP-1')) });
    await client.connect();
    assert.equal(((await client.call('BootNotification', BOOT)) as { status: string }).status, 'Accepted');
    await client.close();
    const second = chargePoint(broker.url, 'CP-2', { wsOpts: tlsOptions(authority.issue('CP-2')) });
    await second.connect();
    await second.close();
  });

  it('no certificate: 403 before the 101, saying one is needed', async () => {
    const refused = await refusal(`${broker.url}/ocpp/CP-1`, {}, tlsOptions());
    assert.equal(refused.status, 403);
    assert.match(refused.body, /client certificate/i);
  });

  it("another charge point's certificate: 403, naming whom it was issued to", async () => {
    const refused = await refusal(`${broker.url}/ocpp/CP-1`, {}, tlsOptions(authority.issue('CP-2')));
    assert.equal(refused.status, 403);
    assert.match(refused.body, /CP-2/);
  });

  it('an expired certificate: 403, saying it expired', async () => {
    const refused = await refusal(
      `${broker.url}/ocpp/CP-1`,
      {},
      tlsOptions(authority.issue('CP-1', { expired: true })),
    );
    assert.equal(refused.status, 403);
    assert.match(refused.body, /expired/i);
  });

  it('a certificate from an authority the broker does not trust: 403', async () => {
    const refused = await refusal(`${broker.url}/ocpp/CP-1`, {}, tlsOptions(stranger.issue('CP-1')));
    assert.equal(refused.status, 403);
    assert.match(refused.body, /not trusted|verify/i);
  });

  it('a valid certificate does not open an unknown or barred charge point', async () => {
    const unknown = await refusal(`${broker.url}/ocpp/CP-9`, {}, tlsOptions(authority.issue('CP-9')));
    assert.equal(unknown.status, 404);
    const banned = await refusal(
      `${broker.url}/ocpp/CP-banned`,
      {},
      tlsOptions(authority.issue('CP-banned')),
    );
    assert.equal(banned.status, 403);
  });

  it('an endpoint on another profile takes clients without a certificate on the same listener', async () => {
    const ws = new WebSocket(`${broker.url}/open/CP-plain`, 'ocpp1.6', tlsOptions());
    await opened(ws);
    ws.close();
  });

  it('over HTTP/2 (RFC 8441) the certificate of the connection is checked for each stream', async () => {
    const session = http2.connect(
      `https://127.0.0.1:${broker.port}`,
      tlsOptions(authority.issue('CP-1')) as never,
    );
    try {
      const own = http2WebSocket(session, `${broker.url}/ocpp/CP-1`, 'ocpp1.6');
      await opened(own);
      own.close();
      const other = http2WebSocket(session, `${broker.url}/ocpp/CP-2`, 'ocpp1.6');
      const status = await new Promise<number>((resolve) => {
        other.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        other.once('open', () => resolve(101));
        other.on('error', () => undefined);
      });
      assert.equal(status, 403);
    } finally {
      session.close();
    }
  });

  it("with ocpp's certificateOrganization, the certificate's Organization must be the operator's", async () => {
    const ours = authority.issue('CP-1', { organization: 'Acme Charging' });
    const client = chargePoint(broker.url.replace(/$/, ''), 'CP-1', {
      endpoint: `${broker.url}/cpo`,
      wsOpts: tlsOptions(ours),
    });
    await client.connect();
    await client.close();
    const theirs = await refusal(
      `${broker.url}/cpo/CP-1`,
      {},
      tlsOptions(authority.issue('CP-1', { organization: 'Other' })),
    );
    assert.equal(theirs.status, 403);
    assert.match(theirs.body, /Organization is \\"Other\\", not \\"Acme Charging\\"/);
    const none = await refusal(`${broker.url}/cpo/CP-1`, {}, tlsOptions(authority.issue('CP-1')));
    assert.equal(none.status, 403);
  });

  it('TLS renegotiation is refused: a second handshake could show another certificate', async () => {
    const certificate = authority.issue('CP-1');
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(
        { host: '127.0.0.1', port: broker.port, maxVersion: 'TLSv1.2', ...tlsOptions(certificate) } as never,
        () => {
          socket.renegotiate({ rejectUnauthorized: false }, (err) =>
            resolve(err ? err.message : 'renegotiated'),
          );
          socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        },
      );
      socket.on('error', (err) => resolve(err.message));
    });
    assert.match(outcome, /no renegotiation/);
  });
});

describe('ocpp1.6 security profile 3: certificates reloaded without a restart', () => {
  const first = new TestCertificateAuthority('First CA');
  const second = new TestCertificateAuthority('Second CA');
  const dir = mkdtempSync(join(tmpdir(), 'broker-reload-'));
  const files = {
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server.key'),
    caFile: join(dir, 'ca.pem'),
    crlFile: join(dir, 'crl.pem'),
  };
  let broker: TestBroker;

  /** Both authorities' CRLs in the one file (with a CRL, OpenSSL wants one for every issuer). */
  function writeCrls(): void {
    first.crl(join(dir, 'first.crl'));
    second.crl(join(dir, 'second.crl'));
    writeFileSync(
      files.crlFile,
      readFileSync(join(dir, 'first.crl'), 'latin1') + readFileSync(join(dir, 'second.crl'), 'latin1'),
    );
  }

  /** The fingerprint of the certificate the broker presents now. */
  function serverFingerprint(): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: broker.port, rejectUnauthorized: false }, () => {
        const cert: PeerCertificate = socket.getPeerCertificate();
        socket.destroy();
        resolve(cert.fingerprint256);
      });
      socket.on('error', reject);
    });
  }

  /** 101, or the refusal's status; a failure to connect at all rejects. */
  async function handshake(certificate: IssuedCertificate): Promise<number> {
    const ws = new WebSocket(`${broker.url}/ocpp/CP-1`, 'ocpp1.6', tlsOptions(certificate));
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.close();
        resolve(101);
      });
      ws.once('unexpected-response', (_req, res) => {
        ws.terminate();
        resolve(res.statusCode ?? 0);
      });
      ws.on('error', reject);
    });
  }

  before(async () => {
    const server = selfSignedCertificate();
    copyFileSync(server.certFile, files.certFile);
    copyFileSync(server.keyFile, files.keyFile);
    copyFileSync(first.caFile, files.caFile);
    writeCrls();
    broker = await startTestBroker(
      {
        tls: { ...files, reloadIntervalMs: 100 },
        endpoints: [OCPP_ENDPOINT],
        ocpp: { allowUnknownChargePoints: true, securityProfile: 3 },
      },
      [Ocpp16Module],
    );
  });
  after(() => broker.close());

  it('a new CA file is trusted from the next handshake on, and the old one no longer', async () => {
    const fromFirst = first.issue('CP-1');
    const fromSecond = second.issue('CP-1');
    assert.equal(await handshake(fromFirst), 101);
    assert.equal(await handshake(fromSecond), 403);
    copyFileSync(second.caFile, files.caFile);
    await waitFor(async () => (await handshake(fromSecond)) === 101, 5000);
    assert.equal(await handshake(fromFirst), 403);
    assert.ok(broker.logLines().some((l) => /TLS files reloaded/.test(String(l['msg']))));
  });

  it('an empty CA file is not taken: the authorities in use stay', async () => {
    writeFileSync(files.caFile, '');
    await waitFor(() => broker.logLines().some((l) => /TLS files not reloaded/.test(String(l['msg']))), 5000);
    assert.equal(await handshake(second.issue('CP-1')), 101);
    copyFileSync(second.caFile, files.caFile);
  });

  it('a CRL revokes a certificate, and a new CRL is taken without a restart', async () => {
    const revoked = second.issue('CP-1');
    assert.equal(await handshake(revoked), 101);
    second.revoke(revoked);
    writeCrls();
    await waitFor(async () => (await handshake(revoked)) === 403, 5000);
    const refused = await refusal(`${broker.url}/ocpp/CP-1`, {}, tlsOptions(revoked));
    assert.match(refused.body, /CERT_REVOKED/);
    assert.equal(await handshake(second.issue('CP-1')), 101);
  });

  it('a file that does not load keeps the certificates in use, says so, and the next good one is taken', async () => {
    const before = await serverFingerprint();
    const failures = () =>
      broker.logLines().filter((l) => /TLS files not reloaded/.test(String(l['msg']))).length;
    const failed = failures();
    writeFileSync(files.keyFile, 'not a key');
    await waitFor(() => failures() > failed, 5000);
    assert.equal(await serverFingerprint(), before, 'the broker still serves the old certificate');
    assert.equal(await handshake(second.issue('CP-1')), 101);
    const next = selfSignedCertificate();
    copyFileSync(next.certFile, files.certFile);
    copyFileSync(next.keyFile, files.keyFile);
    await waitFor(async () => (await serverFingerprint()) !== before, 5000);
  });
});

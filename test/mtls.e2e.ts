import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type IssuedCertificate, TestCertificateAuthority } from './support/certificate-authority.js';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { nextMessage } from './support/ws-helpers.js';

/** A device's side of TLS: its certificate, if any; the broker's own is self-signed. */
function tlsOptions(certificate?: IssuedCertificate): WebSocket.ClientOptions {
  return {
    rejectUnauthorized: false,
    ...(certificate
      ? { cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) }
      : {}),
  };
}

/** The handshake's answer: 101 and the principal the module sees, or the refusal's status and body. */
function handshake(
  url: string,
  certificate?: IssuedCertificate,
): Promise<{ status: number; body: string; principal?: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'echo.v1', tlsOptions(certificate));
    ws.once('open', () => {
      ws.send('whoami');
      nextMessage(ws).then((text) => {
        resolve({
          status: 101,
          body: '',
          principal: (JSON.parse(text) as { principal: Record<string, unknown> }).principal,
        });
        ws.close();
      }, reject);
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        ws.terminate();
      });
    });
    ws.on('error', reject);
  });
}

describe('mutual TLS on any endpoint: a verified client certificate is the principal', () => {
  const authority = new TestCertificateAuthority('Device CA');
  const stranger = new TestCertificateAuthority('Someone else');
  const device = authority.issue('device-7', {
    subjectAltName: 'URI:spiffe://acme/device-7,DNS:device-7.acme',
  });
  const revoked = authority.issue('device-8', { subjectAltName: 'URI:spiffe://acme/device-8' });
  let broker: TestBroker;

  before(async () => {
    authority.revoke(revoked);
    const crlFile = join(mkdtempSync(join(tmpdir(), 'broker-crl-')), 'crl.pem');
    authority.crl(crlFile);
    broker = await startTestBroker({
      tls: { ...selfSignedCertificate(), caFile: authority.caFile, crlFile },
      endpoints: [
        {
          path: '/devices',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'required', carriers: ['certificate'], certificateSubject: 'uri' },
        },
        {
          path: '/by-name',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'required', carriers: ['header', 'certificate'] },
        },
      ],
    });
  });
  after(() => broker?.close());

  it("the certificate's URI SAN (or its CN) is the subject, its names the claims, carrier certificate", async () => {
    const byUri = await handshake(`${broker.url}/devices`, device);
    assert.equal(byUri.status, 101, byUri.body);
    assert.deepEqual(byUri.principal, {
      subject: 'spiffe://acme/device-7',
      claims: {
        certificate: {
          commonName: 'device-7',
          organization: null,
          subjectAltNames: ['URI:spiffe://acme/device-7', 'DNS:device-7.acme'],
        },
      },
      carrier: 'certificate',
    });
    const byName = await handshake(`${broker.url}/by-name`, device);
    assert.equal(byName.principal?.['subject'], 'device-7');
  });

  it('another CA, expired, revoked, no SAN of the kind, no certificate: 401, each with its reason', async () => {
    const cases = [
      [
        stranger.issue('device-7', { subjectAltName: 'URI:spiffe://acme/device-7' }),
        /not accepted: UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
      ],
      [
        authority.issue('device-9', { expired: true, subjectAltName: 'URI:spiffe://acme/device-9' }),
        /not accepted: CERT_HAS_EXPIRED/,
      ],
      [revoked, /not accepted: CERT_REVOKED/],
      [authority.issue('device-10'), /names no uri subject/],
      [undefined, /A credential is required/],
    ] as const;
    for (const [certificate, reason] of cases) {
      const answer = await handshake(`${broker.url}/devices`, certificate);
      assert.equal(answer.status, 401, String(reason));
      assert.match(answer.body, reason);
    }
  });
});

import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { clientCertificateOf } from './client-certificate.js';

describe('clientCertificateOf', () => {
  it('no certificate without TLS, nor on a socket that only says it is encrypted (a request bridged from HTTP/2)', () => {
    assert.equal(clientCertificateOf(undefined), undefined);
    assert.equal(clientCertificateOf(new Socket()), undefined);
    const bridged = Object.assign(new Socket(), { encrypted: true });
    assert.equal(clientCertificateOf(bridged), undefined);
  });
});

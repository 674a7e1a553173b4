import assert from 'node:assert/strict';
import { type IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { ForwardedHeaders } from './forwarded.js';

function request(peer: string, headers: Record<string, string>): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

const behindProxy = new ForwardedHeaders(['127.0.0.1', '10.0.0.0/8']);

describe('ForwardedHeaders', () => {
  it('with no trusted proxy, the headers are ignored', () => {
    const origin = new ForwardedHeaders([]).resolve(
      request('127.0.0.1', { 'x-forwarded-for': '203.0.113.5', 'x-forwarded-proto': 'https' }),
    );
    assert.deepEqual(origin, { address: '127.0.0.1', secure: false, host: undefined });
  });

  it('from a peer that is not trusted, a spoofed header changes nothing', () => {
    const origin = behindProxy.resolve(
      request('198.51.100.7', {
        'x-forwarded-for': '203.0.113.5',
        forwarded: 'for=203.0.113.6;proto=https',
        'x-forwarded-host': 'evil.example',
      }),
    );
    assert.deepEqual(origin, { address: '198.51.100.7', secure: false, host: undefined });
  });

  it('X-Forwarded-For/-Proto/-Host from a trusted peer: the client, its scheme and host', () => {
    const origin = behindProxy.resolve(
      request('127.0.0.1', {
        'x-forwarded-for': '203.0.113.5',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'broker.example:8443',
      }),
    );
    assert.deepEqual(origin, { address: '203.0.113.5', secure: true, host: 'broker.example:8443' });
  });

  it('X-Forwarded-Proto alone (no X-Forwarded-For) from a trusted peer: the peer, over TLS at the proxy', () => {
    const origin = behindProxy.resolve(request('127.0.0.1', { 'x-forwarded-proto': 'https' }));
    assert.deepEqual(origin, { address: '127.0.0.1', secure: true, host: undefined });
  });

  it('the rightmost untrusted hop is the client: what the client wrote to the left is not believed', () => {
    const origin = behindProxy.resolve(
      request('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 203.0.113.5, 10.0.0.2' }),
    );
    assert.equal(origin.address, '203.0.113.5');
  });

  it('RFC 7239 Forwarded: for, proto and host of the element naming the client', () => {
    const origin = behindProxy.resolve(
      request('10.1.2.3', { forwarded: 'for=192.0.2.43;proto=https;host=example.com, for=10.0.0.9' }),
    );
    assert.deepEqual(origin, { address: '192.0.2.43', secure: true, host: 'example.com' });
  });

  it('Forwarded takes IPv6 in brackets with a port, and IPv4 with a port', () => {
    assert.equal(
      behindProxy.resolve(request('127.0.0.1', { forwarded: 'for="[2001:db8:cafe::17]:4711"' })).address,
      '2001:db8:cafe::17',
    );
    assert.equal(
      behindProxy.resolve(request('127.0.0.1', { forwarded: 'for="192.0.2.60:8080"' })).address,
      '192.0.2.60',
    );
  });

  it('garbage, unknown or obfuscated hops, and an over-long header: the peer’s own address', () => {
    for (const forwarded of [
      'for=;;;"',
      'for="[2001:db8::1"',
      'for=unknown',
      'for=_hidden, for=10.0.0.1',
      `for=192.0.2.1${', for=10.0.0.1'.repeat(400)}`,
    ]) {
      const origin = behindProxy.resolve(request('127.0.0.1', { forwarded }));
      assert.deepEqual(origin, { address: '127.0.0.1', secure: false, host: undefined }, forwarded);
    }
    const junk = behindProxy.resolve(request('127.0.0.1', { 'x-forwarded-for': 'not-an-address' }));
    assert.equal(junk.address, '127.0.0.1');
  });

  it('a parameter twice in one Forwarded element (for=a;for=b, RFC 7239 section 4): the peer’s own address', () => {
    for (const forwarded of ['for=203.0.113.5;for=203.0.113.6', 'for=203.0.113.5;proto=https;PROTO=http']) {
      const origin = behindProxy.resolve(request('127.0.0.1', { forwarded }));
      assert.deepEqual(origin, { address: '127.0.0.1', secure: false, host: undefined }, forwarded);
    }
    // The same parameter in two elements is two hops, as it should be.
    const hops = behindProxy.resolve(request('127.0.0.1', { forwarded: 'for=203.0.113.5, for=10.0.0.2' }));
    assert.equal(hops.address, '203.0.113.5');
  });

  it('100 hops are read no further than the last 32, and the answer is one of them', () => {
    const hops = Array.from({ length: 100 }, (_, i) => `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    const origin = behindProxy.resolve(request('127.0.0.1', { 'x-forwarded-for': hops.join(', ') }));
    assert.equal(origin.address, hops[100 - 32]);
  });
});

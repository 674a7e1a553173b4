import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkUpgradeResponse } from './check-response.js';
import { acceptFor, clientCloseFrame, prepareUpgrades, upgradeRequest } from './upgrade-request.js';

const target = { port: 8080, path: '/chat', origin: 'https://app.example.com', subprotocol: 'chat.v1' };

describe('upgrade requests', () => {
  it('computes the RFC 6455 sample Sec-WebSocket-Accept', () => {
    assert.equal(acceptFor('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('sends the token, Origin and subprotocol, and leaves the token out when null', () => {
    const request = upgradeRequest({ ...target, token: 'a.b.c' }, 'dGhlIHNhbXBsZSBub25jZQ==');
    assert.match(request, /^GET \/chat\?token=a\.b\.c HTTP\/1\.1\r\n/);
    assert.match(request, /\r\nOrigin: https:\/\/app\.example\.com\r\n/);
    assert.match(request, /\r\nSec-WebSocket-Protocol: chat\.v1\r\n/);
    assert.ok(request.endsWith('\r\n\r\n'));
    assert.match(upgradeRequest({ ...target, token: null }, 'dGhlIHNhbXBsZSBub25jZQ=='), /^GET \/chat HTTP/);
  });

  it('prepares one request per token, each with its own key', () => {
    const upgrades = prepareUpgrades(target, ['t1', 't2']);
    assert.equal(upgrades.length, 2);
    assert.notEqual(upgrades[0]?.expectedAccept, upgrades[1]?.expectedAccept);
    assert.match(upgrades[1]?.request.toString('latin1') ?? '', /token=t2 /);
  });

  it('builds a masked close frame with code 1000', () => {
    const frame = clientCloseFrame();
    assert.equal(frame.length, 8);
    assert.equal(frame[0], 0x88);
    assert.equal(frame[1], 0x82);
    const code = [0, 1].map((i) => (frame[6 + i] as number) ^ (frame[2 + i] as number));
    assert.deepEqual(code, [0x03, 0xe8]);
  });
});

describe('checkUpgradeResponse', () => {
  const accept = acceptFor('dGhlIHNhbXBsZSBub25jZQ==');
  const head = (status: string, extra: string[]): string => [`HTTP/1.1 ${status}`, ...extra].join('\r\n');

  it('accepts a 101 with the right accept value and subprotocol, whatever the header case', () => {
    const ok = head('101 Switching Protocols', [
      `sec-websocket-accept: ${accept}`,
      'Sec-WebSocket-Protocol: chat.v1',
    ]);
    assert.equal(checkUpgradeResponse(ok, accept, 'chat.v1'), null);
  });

  it('labels every other answer', () => {
    assert.equal(
      checkUpgradeResponse(head('401 Unauthorized', []), accept, 'chat.v1'),
      'HTTP 401 Unauthorized',
    );
    assert.equal(
      checkUpgradeResponse(head('101 Switching Protocols', ['Sec-WebSocket-Accept: x']), accept, 'chat.v1'),
      '101 with a wrong Sec-WebSocket-Accept',
    );
    assert.equal(
      checkUpgradeResponse(
        head('101 Switching Protocols', [`Sec-WebSocket-Accept: ${accept}`]),
        accept,
        'chat.v1',
      ),
      '101 without Sec-WebSocket-Protocol: chat.v1',
    );
    assert.match(checkUpgradeResponse('garbage', accept, 'chat.v1') ?? '', /^malformed status line/);
  });
});

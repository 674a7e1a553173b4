import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { nextMessage, opened } from './support/ws-helpers.js';

describe('wss:// (TLS configured)', () => {
  let broker: TestBroker;

  before(async () => {
    const { certFile, keyFile } = selfSignedCertificate();
    broker = await startTestBroker({
      tls: { certFile, keyFile },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
  });
  after(() => broker.close());

  it('upgrades inside TLS and carries frames', async () => {
    assert.match(broker.url, /^wss:\/\//);
    const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1', { rejectUnauthorized: false });
    await opened(ws);
    ws.send('over tls');
    assert.equal(await nextMessage(ws), 'over tls');
    ws.close();
  });
});

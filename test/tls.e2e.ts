import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { nextMessage, opened } from './support/ws-helpers.js';

describe('wss:// (TLS configured)', () => {
  let broker: TestBroker;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-tls-'));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
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

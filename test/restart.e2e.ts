import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import WebSocket from 'ws';
import { startTestBroker } from './support/test-broker.js';
import { opened, refusedStatus } from './support/ws-helpers.js';

describe('state survives a restart on the same SQLite file', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'broker-restart-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('an origin, a token, a revocation and the audit log are all there after the restart', async () => {
    const config = {
      store: { sqlitePath: join(dir, 'broker.db') },
      endpoints: [
        {
          path: '/secure',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'required', carriers: ['query'] },
        },
      ],
    };
    const origin = 'https://persisted.example';
    let token: string;
    let revoked: string;

    const first = await startTestBroker(config);
    try {
      const api = request(first.url.replace(/^ws/, 'http'));
      await api.post('/admin/v1/origins').send({ origin }).expect(201);
      token = (await api.post('/admin/v1/credentials/tokens').send({ name: 'kept' }).expect(201)).body
        .token as string;
      const gone = await api.post('/admin/v1/credentials/tokens').send({ name: 'gone' }).expect(201);
      revoked = gone.body.token as string;
      await api.delete(`/admin/v1/credentials/${gone.body.id as string}`).expect(200);
    } finally {
      await first.close();
    }

    const second = await startTestBroker(config);
    try {
      const ws = new WebSocket(`${second.url}/secure?token=${token}`, 'echo.v1', { origin });
      await opened(ws);
      ws.close();
      assert.equal(
        await refusedStatus(new WebSocket(`${second.url}/secure?token=${revoked}`, 'echo.v1')),
        401,
      );
      const audit = await request(second.url.replace(/^ws/, 'http')).get('/admin/v1/audit').expect(200);
      assert.deepEqual(
        (audit.body as { action: string }[]).map((r) => r.action),
        ['credential.revoke', 'credential.create', 'credential.create', 'origin.add'],
      );
    } finally {
      await second.close();
    }
  });
});

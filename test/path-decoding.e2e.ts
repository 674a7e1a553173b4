import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import { OCPP_ENDPOINT } from './support/ocpp.js';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';

describe('path parameters are decoded strictly, on every endpoint', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [
          { ...OCPP_ENDPOINT, path: '/ocpp/:chargePointId' },
          { path: '/rooms/:room', subprotocols: ['echo.v1'] },
        ],
        ocpp: { allowUnknownChargePoints: true },
      },
      [Ocpp16Module],
    );
  });
  after(() => broker.close());

  const ocpp = (path: string) =>
    rawExchange(broker.port, upgradeRequest(path, { 'Sec-WebSocket-Protocol': 'ocpp1.6' }));

  it('a malformed percent-escape is 400 with a reason: not a hex escape, cut short, or not UTF-8', async () => {
    for (const path of ['/ocpp/%ZZ', '/ocpp/CP%2', '/ocpp/%C3%28', '/rooms/a%E0%A4%A']) {
      const res = await ocpp(path);
      assert.equal(res.status, 400, path);
      assert.match(res.body, /percent-escape/, path);
    }
    const plain = await rawExchange(broker.port, 'GET /rooms/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(plain.status, 400, 'a plain GET on an endpoint path too');
  });

  it('a well-formed escape is decoded: %25ZZ names the charge point "%ZZ"', async () => {
    const res = await ocpp('/ocpp/%25ZZ');
    assert.equal(res.status, 101);
  });

  it('OCPP identities that cannot be shown or routed safely are refused: dot segments, zero-width and bidi controls', async () => {
    for (const path of [
      '/ocpp/.',
      '/ocpp/..',
      '/ocpp/CP%E2%80%8B1',
      '/ocpp/CP%E2%80%AE1',
      '/ocpp/%EF%BB%BFCP',
    ]) {
      const res = await ocpp(path);
      assert.equal(res.status, 400, path);
      assert.match(res.body, /identity/, path);
    }
    assert.equal((await ocpp('/ocpp/CP-%C3%A9t%C3%A9')).status, 101, 'other Unicode letters are fine');
  });

  it('one charge point, one path: another case or a trailing slash is no endpoint (404), a raw # is 400', async () => {
    for (const path of ['/OCPP/CP7', '/ocpp/CP7/', '/Rooms/a']) {
      const res = await ocpp(path);
      assert.equal(res.status, 404, path);
    }
    const raw = await ocpp('/ocpp/CP#7');
    assert.equal(raw.status, 400, raw.raw.slice(0, 200));
    assert.equal((await ocpp('/ocpp/CP%237')).status, 101, 'an escaped # is part of the identity');
    assert.equal((await ocpp('/ocpp/CP7')).status, 101);
  });
});

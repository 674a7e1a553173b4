import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOPIC_BUS, type BusMessage, type TopicBus } from '#broker/bus';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import request from 'supertest';
import { BOOT, chargePoint, OCPP_ENDPOINT } from './support/ocpp.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { waitFor } from './support/ws-helpers.js';

interface Event {
  readonly topic: string;
  readonly body: { identity: string; action: string; request: Record<string, unknown>; response: unknown };
}

describe('ocpp1.6 central system, driven by a strict ocpp-rpc charge point', () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;
  let cp: ReturnType<typeof chargePoint>;
  const events: Event[] = [];

  before(async () => {
    broker = await startTestBroker({ endpoints: [OCPP_ENDPOINT] }, [Ocpp16Module]);
    api = request(broker.url.replace(/^ws/, 'http'));
    // A dashboard's view: every charge point event, as a bus subscriber (MQTT, GraphQL and WAMP bridge from here).
    broker.app.get<TopicBus>(TOPIC_BUS).subscribe('ocpp/#', (message: BusMessage) => {
      events.push({
        topic: message.topic,
        body: JSON.parse(Buffer.from(message.payload).toString()) as Event['body'],
      });
    });
    for (const tag of [
      { idTag: 'TAG-OK', parentIdTag: 'FLEET' },
      { idTag: 'TAG-SECOND' },
      { idTag: 'TAG-BLOCKED', status: 'Blocked' },
      { idTag: 'TAG-OLD', expiryDate: '2020-01-01T00:00:00Z' },
    ]) {
      assert.equal((await api.post('/admin/v1/id-tags').send(tag)).status, 201);
    }
    cp = chargePoint(broker.url, 'CP-1');
    await cp.connect();
  });
  after(async () => {
    await cp.close();
    await broker.close();
  });

  it('BootNotification: Accepted with the heartbeat interval and the time; the charge point is recorded', async () => {
    const answer = (await cp.call('BootNotification', { ...BOOT, firmwareVersion: '4.2' })) as Record<
      string,
      unknown
    >;
    assert.equal(answer['status'], 'Accepted');
    assert.equal(answer['interval'], 300);
    assert.ok(Math.abs(Date.parse(String(answer['currentTime'])) - Date.now()) < 60_000);
    const state = await api.get('/admin/v1/charge-points/CP-1/state');
    assert.equal(state.status, 200);
    assert.deepEqual(
      [
        state.body.connected,
        state.body.station.vendor,
        state.body.station.firmwareVersion,
        state.body.station.bootStatus,
      ],
      [true, 'Acme', '4.2', 'Accepted'],
    );
  });

  it('Heartbeat answers the time and is recorded', async () => {
    const answer = (await cp.call('Heartbeat', {})) as { currentTime: string };
    assert.ok(Date.parse(answer.currentTime) > 0);
    const state = await api.get('/admin/v1/charge-points/CP-1/state');
    assert.notEqual(state.body.station.lastHeartbeatAt, null);
  });

  it('counts each answered CALL by action in /metrics, once', async () => {
    const heartbeats = async (): Promise<number> => {
      const metrics = await (await fetch(`${broker.url.replace(/^ws/, 'http')}/metrics`)).text();
      const line = /broker_ocpp_calls_total\{direction="in",action="Heartbeat",outcome="result"\} (\d+)/.exec(
        metrics,
      );
      return Number(line?.[1] ?? 0);
    };
    const before = await heartbeats();
    await cp.call('Heartbeat', {});
    await cp.call('Heartbeat', {});
    const middle = await heartbeats();
    assert.equal(middle - before, 2);
    assert.equal(await heartbeats(), middle, 'a second scrape adds nothing new');
  });

  it('Authorize looks the id tag up: Accepted with its parent, Blocked, Expired, unknown Invalid', async () => {
    const status = async (idTag: string) =>
      ((await cp.call('Authorize', { idTag })) as { idTagInfo: Record<string, unknown> }).idTagInfo;
    assert.deepEqual(await status('TAG-OK'), { status: 'Accepted', parentIdTag: 'FLEET' });
    assert.equal((await status('TAG-BLOCKED'))['status'], 'Blocked');
    assert.equal((await status('TAG-OLD'))['status'], 'Expired');
    assert.deepEqual(await status('TAG-NOBODY'), { status: 'Invalid' });
    // An IdToken is a case-insensitive string (OCPP 1.6 types: IdToken, CiString20Type).
    assert.deepEqual(await status('tag-ok'), { status: 'Accepted', parentIdTag: 'FLEET' });
    assert.equal((await status('Tag-Blocked'))['status'], 'Blocked');
  });

  it('StatusNotification: kept per connector and published on the bus', async () => {
    for (const status of ['Available', 'Preparing', 'Charging']) {
      assert.deepEqual(
        await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status }),
        {},
      );
    }
    await cp.call('StatusNotification', {
      connectorId: 0,
      errorCode: 'NoError',
      status: 'Available',
      timestamp: new Date().toISOString(),
    });
    const state = await api.get('/admin/v1/charge-points/CP-1/state');
    assert.deepEqual(
      state.body.connectors.map((c: { connectorId: number; status: string }) => [c.connectorId, c.status]),
      [
        [0, 'Available'],
        [1, 'Charging'],
      ],
    );
    await waitFor(() => events.filter((e) => e.topic === 'ocpp/CP-1/StatusNotification').length === 4);
    const last = events.filter((e) => e.topic === 'ocpp/CP-1/StatusNotification')[2];
    assert.deepEqual(
      [last?.body.identity, last?.body.request['status'], last?.body.response],
      ['CP-1', 'Charging', {}],
    );
  });

  it('a full transaction: start, meter values, stop with transaction data, all kept and published', async () => {
    const start = (await cp.call('StartTransaction', {
      connectorId: 1,
      idTag: 'TAG-OK',
      meterStart: 1000,
      timestamp: new Date().toISOString(),
    })) as { transactionId: number; idTagInfo: { status: string } };
    assert.equal(start.idTagInfo.status, 'Accepted');
    assert.ok(Number.isInteger(start.transactionId));
    const concurrent = (await cp.call('StartTransaction', {
      connectorId: 2,
      idTag: 'TAG-OK',
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { transactionId: number; idTagInfo: { status: string } };
    assert.equal(concurrent.idTagInfo.status, 'ConcurrentTx', 'the tag is already charging');
    assert.notEqual(concurrent.transactionId, start.transactionId);

    for (const wh of [1500, 2100]) {
      const answer = await cp.call('MeterValues', {
        connectorId: 1,
        transactionId: start.transactionId,
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [
              {
                value: String(wh),
                measurand: 'Energy.Active.Import.Register',
                unit: 'Wh',
                context: 'Sample.Periodic',
              },
              { value: '7.2', measurand: 'Power.Active.Import', unit: 'kW' },
            ],
          },
        ],
      });
      assert.deepEqual(answer, {});
    }
    const stop = (await cp.call('StopTransaction', {
      transactionId: start.transactionId,
      idTag: 'TAG-OK',
      meterStop: 2500,
      timestamp: new Date().toISOString(),
      reason: 'EVDisconnected',
      transactionData: [
        {
          timestamp: new Date().toISOString(),
          sampledValue: [{ value: '2500', context: 'Transaction.End', unit: 'Wh' }],
        },
      ],
    })) as { idTagInfo?: { status: string } };
    assert.equal(stop.idTagInfo?.status, 'Accepted');

    const kept = await api.get(`/admin/v1/transactions/${start.transactionId}`);
    assert.equal(kept.status, 200);
    assert.deepEqual(
      [
        kept.body.identity,
        kept.body.meterStart,
        kept.body.meterStop,
        kept.body.stopReason,
        kept.body.startStatus,
      ],
      ['CP-1', 1000, 2500, 'EVDisconnected', 'Accepted'],
    );
    assert.deepEqual(
      kept.body.meterValues.map((v: { value: string }) => v.value),
      ['1500', '7.2', '2100', '7.2', '2500'],
    );
    const ongoing = await api.get('/admin/v1/transactions?identity=CP-1&ongoing=true');
    assert.deepEqual(
      ongoing.body.map((t: { id: number }) => t.id),
      [concurrent.transactionId],
    );
    await cp.call('StopTransaction', {
      transactionId: concurrent.transactionId,
      meterStop: 0,
      timestamp: new Date().toISOString(),
    });
    const stopAgain = await cp.call('StopTransaction', {
      transactionId: 999_999,
      meterStop: 0,
      timestamp: new Date().toISOString(),
    });
    assert.deepEqual(
      stopAgain,
      {},
      'an unknown transaction is still answered, so the charge point can move on',
    );
    await waitFor(() => events.some((e) => e.topic === 'ocpp/CP-1/MeterValues'));
    const started = events.find((e) => e.topic === 'ocpp/CP-1/StartTransaction');
    assert.equal((started?.body.response as { transactionId: number }).transactionId, start.transactionId);
  });

  it('a resent StartTransaction (its answer lost) gets its transaction again; a resent StopTransaction keeps its data once', async () => {
    type Started = { transactionId: number; idTagInfo: { status: string } };
    const start = {
      connectorId: 1,
      idTag: 'TAG-SECOND',
      meterStart: 3000,
      timestamp: new Date().toISOString(),
    };
    const first = (await cp.call('StartTransaction', start)) as Started;
    const resent = (await cp.call('StartTransaction', start)) as Started;
    assert.deepEqual(
      resent,
      first,
      'the same transaction and answer, not a second one refused as ConcurrentTx',
    );
    assert.equal(first.idTagInfo.status, 'Accepted');

    // Refused at its start, this one does not hold the tag once the real one has stopped.
    const refused = (await cp.call('StartTransaction', {
      ...start,
      idTag: 'tag-second',
      connectorId: 2,
      meterStart: 0,
    })) as Started;
    assert.equal(refused.idTagInfo.status, 'ConcurrentTx');

    const stop = {
      transactionId: first.transactionId,
      meterStop: 3100,
      timestamp: new Date().toISOString(),
      transactionData: [
        { timestamp: new Date().toISOString(), sampledValue: [{ value: '3100', unit: 'Wh' }] },
      ],
    };
    await cp.call('StopTransaction', stop);
    await cp.call('StopTransaction', stop);
    const kept = await api.get(`/admin/v1/transactions/${first.transactionId}`);
    assert.deepEqual(
      kept.body.meterValues.map((v: { value: string }) => v.value),
      ['3100'],
    );
    const next = (await cp.call('StartTransaction', {
      ...start,
      meterStart: 3100,
      timestamp: new Date().toISOString(),
    })) as Started;
    assert.equal(next.idTagInfo.status, 'Accepted', 'the tag is free again');
    for (const id of [refused.transactionId, next.transactionId]) {
      await cp.call('StopTransaction', {
        transactionId: id,
        meterStop: 3100,
        timestamp: new Date().toISOString(),
      });
    }
  });

  it('DataTransfer: UnknownVendorId (no vendor extensions), the request still on the bus', async () => {
    const answer = await cp.call('DataTransfer', {
      vendorId: 'com.acme',
      messageId: 'hello',
      data: '{"x":1}',
    });
    assert.deepEqual(answer, { status: 'UnknownVendorId' });
    await waitFor(() => events.some((e) => e.topic === 'ocpp/CP-1/DataTransfer'));
  });

  it('connection events: Connected and Disconnected on the bus', async () => {
    const other = chargePoint(broker.url, 'CP-events');
    await other.connect();
    await other.close();
    await waitFor(() => events.some((e) => e.topic === 'ocpp/CP-events/Disconnected'));
    assert.ok(events.some((e) => e.topic === 'ocpp/CP-events/Connected'));
  });
});

describe('ocpp1.6 boot policies', () => {
  for (const [policy, expected] of [
    ['pending-unknown', 'Pending'],
    ['reject-unknown', 'Rejected'],
  ] as const) {
    it(`${policy}: an unknown charge point gets ${expected} with the retry interval and nothing else; a known one Accepted`, async () => {
      const broker = await startTestBroker(
        { endpoints: [OCPP_ENDPOINT], ocpp: { bootPolicy: policy, bootRetryIntervalSec: 45 } },
        [Ocpp16Module],
      );
      const api = request(broker.url.replace(/^ws/, 'http'));
      const stranger = chargePoint(broker.url, 'CP-stranger');
      const known = chargePoint(broker.url, 'CP-known');
      try {
        assert.equal((await api.post('/admin/v1/charge-points').send({ identity: 'CP-known' })).status, 201);
        await stranger.connect();
        const boot = (await stranger.call('BootNotification', BOOT)) as { status: string; interval: number };
        assert.deepEqual([boot.status, boot.interval], [expected, 45]);
        await assert.rejects(
          stranger.call('Heartbeat', {}),
          (err: Error & { rpcErrorCode?: string }) => err.rpcErrorCode === 'SecurityError',
        );
        await known.connect();
        assert.equal(((await known.call('BootNotification', BOOT)) as { status: string }).status, 'Accepted');
      } finally {
        await stranger.close();
        await known.close();
        await broker.close();
      }
    });
  }
});

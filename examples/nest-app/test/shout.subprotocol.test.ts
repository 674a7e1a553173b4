import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BrokerStore, type BusMessage, GatewayMetrics, parseConfig } from 'ws-protocol-broker';
import { CLOSE, ManualClock } from 'ws-protocol-broker/kit';
import { InMemoryTopicBus, TestConnection, testContext } from 'ws-protocol-broker/testing';
import { ShoutBoard } from '../src/shout-board.js';
import { ShoutCounts } from '../src/shout-counts.js';
import { SHOUT_CONFIG } from '../src/shout.config.js';
import { ShoutSubprotocol } from '../src/shout.subprotocol.js';

it('a unit test of the subprotocol module, without a socket: capitals back, on the bus, counted, empty refused', async (t) => {
  const bus = new InMemoryTopicBus();
  // The broker's real store, in memory, with the module's own table.
  const store = await BrokerStore.open({ sqlitePath: ':memory:' });
  t.after(() => store.close());
  const counts = new ShoutCounts(store);
  await counts.onModuleInit();
  const board = new ShoutBoard(new GatewayMetrics(), counts);
  const heard: BusMessage[] = [];
  bus.subscribe('shout/#', (message) => void heard.push(message));
  const connection = new TestConnection();
  const config = parseConfig({ endpoints: [{ path: '/shout', subprotocols: ['shout.v1'] }] }, [SHOUT_CONFIG]);
  new ShoutSubprotocol(bus, board, config).open(
    connection,
    testContext({ principal: { subject: 'ann', claims: {}, carrier: 'header' } }),
  );
  connection.receive('hello');
  assert.deepEqual(connection.sent, ['HELLO']);
  assert.equal(heard[0]?.topic, 'shout/ann');
  assert.equal(Buffer.from(heard[0]?.payload ?? []).toString(), 'HELLO');
  // The count is written behind the answer: read until it is there (2 s at most).
  let rows: [string, unknown][] = [];
  for (let tries = 0; tries < 40 && rows.length === 0; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    rows = (await board.rows()).map((row) => [row.key, row.cells['shouts']]);
  }
  assert.deepEqual(rows, [['ann', 1]]);
  connection.receive('   ');
  assert.deepEqual(connection.closedWith, { code: 4400, reason: 'empty message' });
});

it('the protocol kit is an entry of its own, for a core written without Nest', () => {
  const clock = new ManualClock();
  const fired: number[] = [];
  clock.after(1000, () => fired.push(clock.now()));
  clock.advance(999);
  assert.deepEqual(fired, []);
  clock.advance(1);
  assert.deepEqual(fired, [1_001_000]);
  assert.equal(CLOSE.policyViolation, 1008);
});

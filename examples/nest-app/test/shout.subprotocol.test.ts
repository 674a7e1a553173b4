import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type BusMessage, GatewayMetrics } from 'ws-protocol-broker';
import { CLOSE, ManualClock } from 'ws-protocol-broker/kit';
import { InMemoryTopicBus, TestConnection, testContext } from 'ws-protocol-broker/testing';
import { ShoutBoard } from '../src/shout-board.js';
import { ShoutSubprotocol } from '../src/shout.subprotocol.js';

it('a unit test of the subprotocol module, without a socket: capitals back, on the bus, counted, empty refused', () => {
  const bus = new InMemoryTopicBus();
  const board = new ShoutBoard(new GatewayMetrics());
  const heard: BusMessage[] = [];
  bus.subscribe('shout/#', (message) => void heard.push(message));
  const connection = new TestConnection();
  new ShoutSubprotocol(bus, board).open(
    connection,
    testContext({ principal: { subject: 'ann', claims: {}, carrier: 'header' } }),
  );
  connection.receive('hello');
  assert.deepEqual(connection.sent, ['HELLO']);
  assert.equal(heard[0]?.topic, 'shout/ann');
  assert.equal(Buffer.from(heard[0]?.payload ?? []).toString(), 'HELLO');
  assert.deepEqual(
    board.rows().map((row) => [row.key, row.cells['shouts']]),
    [['ann', 1]],
  );
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

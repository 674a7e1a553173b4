import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type WebSocket } from 'ws';
import { type InputBudgetLimits } from '#broker/kit';
import { WsConnection } from './ws-connection.js';

/** The parts of a ws WebSocket that WsConnection uses, recording what is sent. */
class FakeWs extends EventEmitter {
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: unknown[] = [];
  send(data: unknown): void {
    this.sent.push(data);
  }
  close(code: number, reason: string): void {
    this.sent.push(`close ${code} ${reason}`);
    this.readyState = this.CLOSING;
  }
  pause(): void {
    this.sent.push('pause');
  }
  resume(): void {
    this.sent.push('resume');
  }
}

/** The socket under the WebSocket: records corks, and emits 'data' for a read. */
class FakeSocket extends EventEmitter {
  constructor(private readonly calls: string[]) {
    super();
  }
  cork(): void {
    this.calls.push('cork');
  }
  uncork(): void {
    this.calls.push('uncork');
  }
}

function connection(inputLimits: InputBudgetLimits | null = null) {
  const ws = new FakeWs();
  const calls: string[] = [];
  const socket = new FakeSocket(calls);
  const observer = {
    received: (data: Buffer) => calls.push(`received ${data.toString()}`),
    ponged: () => calls.push('ponged'),
    errored: (err: Error) => calls.push(`errored ${err.message}`),
    closed: (code: number) => calls.push(`closed ${code}`),
    sent: () => undefined,
    overflowed: () => undefined,
    dropped: () => calls.push('dropped'),
    failed: (err: Error) => calls.push(`failed ${err.message}`),
    throttled: () => calls.push('throttled'),
    owedByAddress: () => 0,
    budgetStarted: () => undefined,
    budgetEnded: () => undefined,
  };
  const conn = new WsConnection('c1', ws as unknown as WebSocket, socket, 1024, observer, 100, inputLimits);
  return { conn, ws, socket, calls };
}

const nextTick = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WsConnection', () => {
  it('counts work charged after a handler returned against the input budget: past its burst, reads pause', () => {
    const { conn, ws, calls } = connection({ share: 0.25, burstMs: 100 });
    conn.charge(60);
    assert.deepEqual(ws.sent, [], 'within the burst');
    conn.charge(60);
    assert.deepEqual(ws.sent, ['pause']);
    assert.deepEqual(calls, ['throttled']);
    conn.closedBy(1000, '');
  });

  it('a charge pauses nothing on an endpoint without a budget, or once the connection is closing', () => {
    const unbudgeted = connection();
    unbudgeted.conn.charge(1_000);
    assert.deepEqual(unbudgeted.ws.sent, []);
    const closing = connection({ share: 0.25, burstMs: 100 });
    closing.conn.close(1000, 'bye');
    closing.conn.charge(1_000);
    assert.deepEqual(closing.ws.sent, ['close 1000 bye']);
  });

  it('an event is dropped and reported while more than the drop threshold is unsent; other sends go on to the cap', () => {
    const { conn, ws, calls } = connection();
    assert.equal(conn.sendEvent('first'), true);
    ws.bufferedAmount = 101;
    assert.equal(conn.sendEvent('dropped'), false);
    conn.send('an answer');
    ws.bufferedAmount = 100;
    assert.equal(conn.sendEvent('again'), true);
    assert.deepEqual(ws.sent, ['first', 'an answer', 'again']);
    assert.deepEqual(
      calls.filter((c) => c === 'dropped'),
      ['dropped'],
    );
  });

  it('corks the socket once for the frames of one turn of the event loop and uncorks after its I/O', async () => {
    const { conn, ws, calls } = connection();
    conn.send(Buffer.from([1]));
    conn.send(Buffer.from([2]));
    await nextTick();
    conn.send('three');
    assert.deepEqual(calls, ['cork'], 'still corked after a tick: another read may add frames');
    assert.equal(ws.sent.length, 3);
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork']);
    conn.send(Buffer.from([4]));
    assert.deepEqual(calls, ['cork', 'uncork', 'cork']);
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork', 'cork', 'uncork']);
  });

  it("writes what it sends while handling the peer's own read when that read is handled", async () => {
    const { conn, ws, calls } = connection();
    conn.onMessage(() => {
      conn.send('answer one');
      conn.send('answer two');
    });
    conn.deliver(Buffer.from('first'), false);
    conn.deliver(Buffer.from('second'), false);
    assert.deepEqual(calls, ['cork'], 'held while the read is being handled');
    await nextTick();
    assert.deepEqual(
      calls,
      ['cork', 'uncork', 'cork'],
      'written at the end of the tick, held again for the turn',
    );
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork', 'cork', 'uncork']);
    assert.equal(ws.sent.length, 4);
  });

  it('schedules no write for a read whose answer comes later', async () => {
    const { conn, socket, ws, calls } = connection();
    let answer = (): void => undefined;
    conn.onMessage(() => {
      answer = () => conn.send('late answer');
    });
    socket.emit('data', Buffer.from('call'));
    conn.deliver(Buffer.from('call'), false);
    await nextTick();
    assert.deepEqual(calls, ['cork'], 'nothing was sent while handling the read: the socket is left alone');
    answer();
    await nextTick();
    assert.deepEqual(calls, ['cork'], 'a send after the read waits for the end of the turn');
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork']);
    assert.deepEqual(ws.sent, ['late answer']);
  });

  it("a delivery nested in a handler leaves the outer handler's answer on the tick", async () => {
    const { conn, socket, calls } = connection();
    let depth = 0;
    conn.onMessage(() => {
      if (depth++ > 0) return;
      conn.deliver(Buffer.from('inner'), false);
      conn.send('outer answer');
    });
    socket.emit('data', Buffer.from('outer'));
    conn.deliver(Buffer.from('outer'), false);
    await nextTick();
    assert.deepEqual(calls, ['cork', 'uncork', 'cork']);
  });

  it("holds what ws writes by itself on a read (the close handshake's frame) for the end of the turn", async () => {
    const { socket, calls } = connection();
    const order: string[] = [];
    socket.on('data', () => order.push(`ws reads, corks: ${calls.join(' ')}`));
    socket.emit('data', Buffer.from([0x88, 0x80]));
    socket.emit('data', Buffer.from([0x89, 0x80]));
    assert.deepEqual(
      order,
      ['ws reads, corks: cork', 'ws reads, corks: cork'],
      'corked once, before ws reads',
    );
    await nextTick();
    assert.deepEqual(calls, ['cork'], 'still held after the tick: no message was delivered');
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork']);
  });

  it('keeps sends caused by other connections for the end of the turn', async () => {
    const a = connection();
    const b = connection();
    a.conn.onMessage(() => b.conn.send('routed to b'));
    a.conn.deliver(Buffer.from('publish'), false);
    await nextTick();
    assert.deepEqual(b.calls, ['cork'], "b's frame waits: more may come for b in this turn");
    assert.deepEqual(a.calls, [], 'nothing was sent to a, so its socket is not touched');
    await nextTurn();
    assert.deepEqual(b.calls, ['cork', 'uncork']);
  });

  it('uncorks every connection corked in the turn', async () => {
    const a = connection();
    const b = connection();
    a.conn.send('to a');
    b.conn.send('to b');
    await nextTurn();
    assert.deepEqual(
      [a.calls, b.calls],
      [
        ['cork', 'uncork'],
        ['cork', 'uncork'],
      ],
    );
  });

  it('does not touch the socket when nothing is sent (closed connection)', async () => {
    const { conn, ws, calls } = connection();
    ws.readyState = ws.CLOSED;
    conn.send(Buffer.from([1]));
    await nextTurn();
    assert.deepEqual(calls, []);
    assert.equal(ws.sent.length, 0);
  });

  it("tells its observer of the socket's messages, pongs and errors, each connection its own", () => {
    const a = connection();
    const b = connection();
    a.ws.emit('message', Buffer.from('to a'), false);
    b.ws.emit('message', Buffer.from('to b'), false);
    a.ws.emit('pong', Buffer.alloc(0));
    b.ws.emit('error', new Error('bad frame'));
    assert.deepEqual(a.calls, ['received to a', 'ponged']);
    assert.deepEqual(b.calls, ['received to b', 'errored bad frame']);
  });

  it('a message handler that throws: reported, 1011, and the handlers after it do not run', () => {
    const { conn, ws, calls } = connection();
    conn.onMessage((data) => {
      throw new Error(`bad ${data.toString()}`);
    });
    conn.onMessage(() => calls.push('second handler'));
    conn.deliver(Buffer.from('x'), false);
    assert.deepEqual(calls, ['failed bad x']);
    assert.deepEqual(ws.sent, ['close 1011 internal error']);
  });

  it('an async message handler that rejects: reported, 1011; a value that is not an Error is wrapped', async () => {
    const { conn, ws, calls } = connection();
    conn.onMessage(() => Promise.reject('plain string'));
    conn.deliver(Buffer.from('x'), false);
    await nextTurn();
    assert.deepEqual(calls, ['failed plain string']);
    assert.deepEqual(ws.sent, ['close 1011 internal error']);
  });

  it('runs every close handler, one that throws included, then tells the observer', () => {
    const { conn, ws, calls } = connection();
    conn.onClose(() => {
      throw new Error('module bug');
    });
    conn.onClose((code, reason) => calls.push(`module saw ${code} ${reason}`));
    ws.emit('close', 1001, Buffer.from('going away'));
    assert.deepEqual(calls, ['failed module bug', 'module saw 1001 going away', 'closed 1001']);
  });

  it('once closed, the socket and the WebSocket no longer hold the connection, and ignore late events', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Built in a function of its own, so that only the WeakRef points to the connection from here.
    const open = () => {
      const { conn, ws, socket, calls } = connection();
      return { ref: new WeakRef(conn), ws, socket, calls };
    };
    const { ref, ws, socket, calls } = open();
    ws.emit('close', 1000, Buffer.from(''));
    ws.emit('message', Buffer.from('late'), false);
    socket.emit('data', Buffer.from('late'));
    assert.deepEqual(calls, ['closed 1000'], 'nothing after the close');
    await nextTurn();
    gc();
    assert.equal(ref.deref(), undefined, 'collected while its socket and WebSocket live on');
  });
});

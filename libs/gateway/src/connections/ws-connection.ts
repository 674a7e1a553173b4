import { type WebSocket } from 'ws';
import { closeReason } from './close-reason.js';
import { type Connection } from './subprotocol.types.js';
import { uncorkAfterIo } from '../http-front/uncork-after-io.js';
import { CLOSE, InputBudget, type InputBudgetLimits, systemClock } from '#broker/kit';

type MessageHandler = (data: Buffer, isBinary: boolean) => void;
type CloseHandler = (code: number, reason: string) => void;

/** What the gateway learns of one connection: its socket's events, and what its module does with it. */
export interface ConnectionObserver {
  /** A message arrived (before the gateway's checks; WsConnection.deliver hands it to the module). */
  received(data: Buffer, isBinary: boolean): void;
  ponged(): void;
  errored(err: Error): void;
  /** The socket closed; the module's close handlers have run. */
  closed(code: number): void;
  sent(bytes: number): void;
  /** The outbound cap was hit and the connection is being closed with 1008. */
  overflowed(buffered: number): void;
  /** An event was dropped: the client has more than the drop threshold unsent (see sendEvent). */
  dropped(): void;
  /** A module's message handler threw. */
  failed(err: Error): void;
  /** The connection's messages took more than its share of the loop: its reads pause for `ms`. */
  throttled(ms: number): void;
  /** What the client's address owes the loop from its other connections (see AddressDebts). */
  owedByAddress(): number;
  /** The connection's budget started (at its first message). */
  budgetStarted(budget: InputBudget): void;
  /** The connection closed with its budget: what it still owes stays with the address. */
  budgetEnded(budget: InputBudget): void;
}

/** What a connection needs of the TCP (or TLS) socket under its WebSocket. */
export interface Corkable {
  cork(): void;
  uncork(): void;
  /** WsConnection hears of each read before ws does (see holdWrites). */
  prependListener(event: 'data', listener: (this: Corkable) => void): unknown;
}

/** How long a connection closed for a full outbound buffer gets to finish its close handshake. */
const TERMINATE_AFTER_MS = 1000;

/** The WsConnection of a ws WebSocket, for the socket's listeners (ws marks its own sockets the same way). */
const kConnection = Symbol('connection');
/** Unset once the connection has closed (see closedBy). */
type OwnedWebSocket = WebSocket & { [kConnection]: WsConnection | undefined };
type OwnedSocket = Corkable & { [kConnection]: WsConnection | undefined };

function connectionOf(ws: WebSocket): WsConnection | undefined {
  return (ws as OwnedWebSocket)[kConnection];
}

// The socket's listeners are these functions, shared by every connection, and not a closure per
// connection and event: an idle broker holds one WsConnection per connection.
function onSocketRead(this: Corkable): void {
  (this as OwnedSocket)[kConnection]?.holdWrites();
}

function onSocketMessage(this: WebSocket, data: Buffer, isBinary: boolean): void {
  connectionOf(this)?.observer.received(data, isBinary);
}

function onSocketPong(this: WebSocket): void {
  connectionOf(this)?.observer.ponged();
}

function onSocketPing(this: WebSocket, data: Buffer): void {
  connectionOf(this)?.pinged(data);
}

/** Pings a client may send in one window (RFC 6455 wants each answered)... */
const MAX_PINGS = 256;
/** ...of this many milliseconds; past it the connection is closed 1008. */
const PING_WINDOW_MS = 10_000;

function onSocketError(this: WebSocket, err: Error): void {
  connectionOf(this)?.observer.errored(err);
}

function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
  connectionOf(this)?.closedBy(code, reason.toString());
}

/**
 * The thin transport handed to modules. The outbound cap keeps a subscriber that stopped reading
 * from growing the broker's memory: past it the connection is closed with 1008.
 */
export class WsConnection implements Connection {
  private readonly messageHandlers: MessageHandler[] = [];
  private readonly closeHandlers: CloseHandler[] = [];

  /** True while this turn's sends are held in the socket, to leave as one write (see send). */
  private corked = false;
  /** A message of this connection's own read is being handed to the module (see deliver). */
  private delivering = false;
  /** A write of what is held is due when the current read's messages are handled (see deliver). */
  private answerDue = false;
  /** Pings in the current window (see pinged). */
  private pings = 0;
  private pingWindowStart = 0;
  /** Made at the first message: a connection that never sends costs nothing for it. */
  private budget: InputBudget | null = null;

  constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    /** The TCP (or TLS) socket under `ws`: corked per turn so a burst of messages is one writev. */
    private readonly socket: Corkable,
    private readonly outboundCap: number,
    readonly observer: ConnectionObserver,
    /** Above this many unsent bytes, events are dropped (see sendEvent). */
    private readonly dropEventsAbove: number = outboundCap,
    /** The share of the loop this connection's messages may take (see deliver); null: unbounded. */
    private readonly inputLimits: InputBudgetLimits | null = null,
  ) {
    (ws as OwnedWebSocket)[kConnection] = this;
    (socket as OwnedSocket)[kConnection] = this;
    socket.prependListener('data', onSocketRead);
    ws.on('message', onSocketMessage);
    ws.on('pong', onSocketPong);
    ws.on('ping', onSocketPing);
    ws.on('error', onSocketError);
    // ws emits 'close' once, so `on` does what `once` would without a wrapper per connection.
    ws.on('close', onSocketClose);
  }

  /**
   * The socket closed: the module's close handlers run, then the observer hears of it, then the
   * socket and the WebSocket let go of this connection. Node keeps a closed socket, and the ws
   * WebSocket on it, reachable for a while after 'close', long enough for a collection or two of
   * the young generation: whatever they still pointed to (this connection, its OpenConnection, the
   * module's state) was promoted to the old generation with them, which costs every later collection.
   */
  closedBy(code: number, reason: string): void {
    // Each close handler runs even if an earlier one fails; the failure is reported, never thrown.
    for (const handler of this.closeHandlers) this.contain(handler, code, reason, false);
    if (this.budget !== null) {
      this.observer.budgetEnded(this.budget);
      this.budget.stop();
    }
    this.observer.closed(code);
    (this.ws as OwnedWebSocket)[kConnection] = undefined;
    (this.socket as OwnedSocket)[kConnection] = undefined;
  }

  /**
   * What this turn writes to the socket from here on is held, to leave in one write once the turn's
   * I/O callbacks have run: the module's sends, and, from each read, what ws answers by itself (the
   * close frame of the close handshake, a pong). A turn's writes to many peers then leave together,
   * where a write in the middle of the reads woke the peer's process once per write: holding the
   * close frame too cut the broker's CPU per handshake by about a twentieth (BENCHMARKS.md's git history).
   */
  holdWrites(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    uncorkAfterIo(this);
  }

  /** Called by uncorkAfterIo once this turn's I/O callbacks have run: what the turn sent leaves. */
  uncork(): void {
    this.corked = false;
    this.socket.uncork();
  }

  /** On process.nextTick after a read (see deliver): what was sent while handling it leaves now. */
  private static writeAnswers(connection: WsConnection): void {
    connection.answerDue = false;
    if (!connection.corked) return;
    connection.socket.uncork();
    connection.socket.cork();
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  send(data: string | Uint8Array): void {
    if (!this.open) return;
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    if (this.ws.bufferedAmount + size > this.outboundCap) {
      this.observer.overflowed(this.ws.bufferedAmount);
      this.close(CLOSE.policyViolation, 'outbound buffer limit exceeded: the client is not reading');
      setTimeout(() => this.ws.terminate(), TERMINATE_AFTER_MS).unref();
      return;
    }
    // Fan-out and fan-in send many small messages per turn of the event loop; one syscall per message
    // was most of their cost. Writes made in this turn leave together once its I/O callbacks have run.
    this.holdWrites();
    this.ws.send(data, { binary: typeof data !== 'string' });
    this.observer.sent(size);
    if (this.delivering && !this.answerDue) {
      this.answerDue = true;
      process.nextTick(WsConnection.writeAnswers, this);
    }
  }

  sendEvent(data: string | Uint8Array): boolean {
    if (this.ws.bufferedAmount > this.dropEventsAbove) {
      this.observer.dropped();
      return false;
    }
    this.send(data);
    return true;
  }

  close(code?: number, reason?: string): void {
    if (this.ws.readyState === this.ws.CLOSED || this.ws.readyState === this.ws.CLOSING) return;
    this.ws.close(code, reason === undefined ? undefined : closeReason(reason));
  }

  /**
   * Answers a ping with its pong. ws's own answer (autoPong) terminates a connection with more than
   * 60 pongs not yet written, which a client sending pings right behind its upgrade meets before
   * its 101 has left: it then got nothing at all. Here each ping is answered in order after the
   * 101, and a flood past MAX_PINGS in a window closes 1008 with a reason.
   */
  pinged(data: Buffer): void {
    const now = Date.now();
    if (now - this.pingWindowStart > PING_WINDOW_MS) {
      this.pingWindowStart = now;
      this.pings = 0;
    }
    if (++this.pings > MAX_PINGS) return this.close(CLOSE.policyViolation, 'Too many pings');
    if (this.ws.readyState === this.ws.OPEN) this.ws.pong(data);
  }

  onMessage(handler: MessageHandler): void {
    this.messageHandlers.push(handler);
  }

  onClose(handler: CloseHandler): void {
    this.closeHandlers.push(handler);
  }

  /**
   * Hands one inbound message to the module, once the gateway has let it through. A module that
   * throws, or whose async handler rejects, loses this connection (1011), never the process.
   *
   * What the module sends this peer while handling the peer's own read (acknowledgements, answers,
   * the next messages of a window the peer's PUBACKs opened) is written once that read is handled,
   * on process.nextTick, instead of at the end of the turn: the peer can start on it while the turn
   * goes on, where waiting made the two event loops take turns (BENCHMARKS.md's git history, MQTT QoS 1 fan-in).
   * Sends caused by other connections' reads still wait for the turn, and leave in one write. The
   * write is scheduled by the first such send, not by every message: a module that answers later (an
   * OCPP handler awaits the store) would only uncork an empty socket on that tick.
   *
   * The time the handlers take is charged to the connection's InputBudget (the outermost delivery's
   * only: a nested one is inside it), which pauses its reads when it takes more than its share.
   */
  deliver(data: Buffer, isBinary: boolean): void {
    // Restored, not cleared: a delivery nested in a handler leaves the outer one's sends scheduled.
    const outer = this.delivering;
    this.delivering = true;
    const start = this.inputLimits === null || outer ? -1 : systemClock.monotonic();
    for (const handler of this.messageHandlers) {
      if (!this.contain(handler, data, isBinary, true)) break;
    }
    this.delivering = outer;
    if (start >= 0) this.charge(systemClock.monotonic() - start);
  }

  charge(ms: number): void {
    // Work that finished after the client left: its budget is stopped, and no read is left to pause.
    if (!(ms > 0) || this.inputLimits === null || this.ws.readyState !== this.ws.OPEN) return;
    if (this.budget === null) {
      const limits = this.inputLimits as InputBudgetLimits;
      this.budget = new InputBudget(
        limits,
        systemClock,
        this.ws,
        this.observer,
        this.observer.owedByAddress(),
      );
      this.observer.budgetStarted(this.budget);
    }
    this.budget.charge(ms);
  }

  /**
   * Runs a module's handler; false when it threw synchronously. A returned promise's rejection is
   * caught too. The handler and its arguments are passed, not wrapped: this runs for every message,
   * and a closure per call (two, with the failure callback) was garbage on every protocol's path.
   */
  private contain<A, B>(handler: (a: A, b: B) => unknown, a: A, b: B, closeOnFailure: boolean): boolean {
    let result: unknown;
    try {
      result = handler(a, b);
    } catch (err) {
      this.fail(err, closeOnFailure);
      return false;
    }
    if (result instanceof Promise) result.catch((err: unknown) => this.fail(err, closeOnFailure));
    return true;
  }

  private fail(err: unknown, closeOnFailure: boolean): void {
    this.observer.failed(err instanceof Error ? err : new Error(String(err)));
    if (closeOnFailure) this.close(CLOSE.internalError, 'internal error');
  }
}

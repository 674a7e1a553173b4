import { type Connection } from '#broker/gateway';
import { systemClock, type Clock, type PeerPort, type TimerHandle } from '#broker/kit';
import { randomUUID } from 'node:crypto';
import { CallTracker, ConnectionClosedError } from './call-tracker.js';
import { type BadMessageReason, CallErrorResponse, InvalidResponseError, OcppError } from './errors.js';
import { encodeCall, encodeError, encodeResult, parseFrame, type Frame, type Payload } from './rpc-frame.js';
import { type OcppSchemas } from './schemas.js';
import { SerialQueue } from './serial-queue.js';

/** What the central system does with a CALL once the frame is sound (see central-system.ts). */
export interface CallDispatcher {
  /** Refuses a CALL before its payload is even validated (NotSupported, SecurityError), or null. */
  admit(action: string): OcppError | null;
  handle(action: string, payload: Payload, messageId: string): Promise<Payload>;
}

export interface SessionObserver {
  badMessage(reason: BadMessageReason, detail: string): void;
  /** A handler failed for a reason of ours: answered InternalError, logged here. */
  internalError(action: string, err: Error): void;
}

export interface SessionOptions {
  readonly schemas: OcppSchemas;
  readonly dispatcher: CallDispatcher;
  readonly observer: SessionObserver;
  /**
   * Only `send`: the session never ends the connection (replacing one is the subprotocol's call); and
   * `charge`, for the loop time of a CALL that waited behind another (see handle).
   */
  readonly peer: Pick<PeerPort, 'send'> & Pick<Connection, 'charge'>;
  /** Bounds our CALLs' wait for an answer, and our handlers' time to answer a CALL. */
  readonly callTimeoutMs: number;
  readonly maxQueuedCalls: number;
  /** Time for our CALLs' timeouts and the inbound deadline (systemClock by default; a spec's ManualClock). */
  readonly clock?: Clock;
  /** Resolves once the dispatcher can judge CALLs; inbound CALLs wait for it, in order. */
  readonly ready?: Promise<void>;
}

/**
 * One charge point connection's OCPP-J engine, sans-IO: text in, text out. Inbound CALLs run one at
 * a time in arrival order (a bounded queue behind the one being handled); our own CALLs go through
 * the call tracker. Nothing here knows about sockets, Nest or the store.
 */
export class OcppSession {
  private readonly inbound: SerialQueue;
  /**
   * The ids of the inbound CALLs queued or in progress, in arrival order. The queue runs them in that
   * order and each ends by removing its own id, so the one ending is always first. An array of at
   * most maxQueuedCalls + 1 ids, not a Set: for so few, an array's shift is cheaper than Set.delete
   * at every CALL.
   */
  private readonly inboundIds: string[] = [];
  private readonly outbound: CallTracker;
  private readonly clock: Clock;
  /**
   * The inbound CALL being handled (the queue runs one at a time), when it started, and one timer per
   * connection for its deadline, instead of a timer and two closures per CALL. A CALL only records
   * its start; the timer, armed by the first CALL, looks at the CALL in progress when it fires and
   * waits again for the rest of that CALL's time: cheaper than moving the timer at each start. Idle,
   * the timer is not re-armed.
   */
  private handlingId: string | null = null;
  private handlingAction = '';
  private handlingSince = 0;
  private late = false;
  private deadline: TimerHandle | null = null;
  private isClosed = false;
  /** In receive(): a CALL started now runs inside its message's delivery. */
  private receiving = false;

  constructor(private readonly options: SessionOptions) {
    this.clock = options.clock ?? systemClock;
    this.inbound = new SerialQueue(options.maxQueuedCalls + 1, (err) =>
      options.observer.internalError('(queue)', err as Error),
    );
    // Nothing inbound is judged before the connection's stored state (an earlier accepted boot) is loaded.
    if (options.ready !== undefined) this.inbound.push(() => options.ready as Promise<void>);
    this.outbound = new CallTracker({
      timeoutMs: options.callTimeoutMs,
      maxQueued: options.maxQueuedCalls,
      newId: randomUUID,
      send: (id, action, payload) => options.peer.send(encodeCall(id, action, payload)),
      clock: this.clock,
    });
  }

  receive(text: string): void {
    // Restored, not cleared: a receive nested in a handler leaves the outer one's flag as it was.
    const outer = this.receiving;
    this.receiving = true;
    try {
      this.take(text);
    } finally {
      this.receiving = outer;
    }
  }

  private take(text: string): void {
    const parsed = parseFrame(text);
    if (!parsed.ok) {
      this.options.observer.badMessage(parsed.reason, parsed.problem);
      if (parsed.id !== null) this.options.peer.send(encodeError(parsed.id, parsed.code, parsed.problem));
      return;
    }
    const frame = parsed.message;
    switch (frame.kind) {
      case 'call':
        return this.onCall(frame.id, frame.action, frame.payload);
      case 'result':
      case 'error':
        return this.onResponse(frame);
      case 'unknown-type':
        return this.options.observer.badMessage('unknown-type', `message type ${frame.type} ignored`);
    }
  }

  /**
   * Sends a CALL to the charge point and resolves with its CALLRESULT payload. Rejects with an
   * OcppError when our own payload fails the schema (nothing is sent), CallErrorResponse when the
   * charge point answers CALLERROR, InvalidResponseError when its CALLRESULT fails the schema,
   * CallTimeoutError, CallQueueFullError or ConnectionClosedError.
   */
  call(action: string, payload: unknown): Promise<unknown> {
    try {
      this.options.schemas.validate(action, 'req', payload);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.outbound.call(action, payload);
  }

  /** The transport closed: our pending CALLs fail, inbound answers are dropped. */
  closed(): void {
    this.outbound.close(new ConnectionClosedError('the charge point disconnected'));
    this.isClosed = true;
    if (this.deadline !== null) this.clock.cancel(this.deadline);
  }

  private onCall(id: string, action: string, payload: unknown): void {
    if (this.inboundIds.includes(id)) {
      return this.refuse(
        id,
        'duplicate-id',
        new OcppError('ProtocolError', `A CALL with id ${id} is already in progress.`),
      );
    }
    if (!this.options.schemas.knows(action)) {
      return this.refuse(
        id,
        'unknown-action',
        new OcppError('NotImplemented', `${action} is not an OCPP 1.6 action.`),
      );
    }
    // Added first: the queue may start the CALL at once, and its end removes the id.
    this.inboundIds.push(id);
    if (!this.inbound.push(() => this.handle(id, action, payload))) {
      this.inboundIds.pop();
      return this.refuse(
        id,
        'busy',
        new OcppError(
          'GenericError',
          'Too many CALLs in progress: send one at a time and wait for its answer.',
        ),
      );
    }
  }

  private refuse(id: string, reason: BadMessageReason, err: OcppError): void {
    this.options.observer.badMessage(reason, err.message);
    this.options.peer.send(encodeError(id, err.code, err.message, err.details));
  }

  /**
   * A CALL that waited behind another starts outside its message's delivery, whose time the input
   * budget charged: its judging and its handler's start (up to the handler's first await), which
   * for a large MeterValues is most of its cost, are charged here instead.
   */
  private handle(id: string, action: string, payload: unknown): Promise<void> {
    if (this.receiving) return this.judge(id, action, payload);
    const started = this.clock.monotonic();
    const done = this.judge(id, action, payload);
    this.options.peer.charge(this.clock.monotonic() - started);
    return done;
  }

  /**
   * Admission and validation run in the queue too, so a CALL is judged once the ones before it are
   * done: a Heartbeat pipelined behind an accepted BootNotification is admitted.
   */
  private async judge(id: string, action: string, payload: unknown): Promise<void> {
    const { dispatcher, schemas } = this.options;
    const refusal = dispatcher.admit(action);
    if (refusal !== null) {
      this.inboundIds.shift();
      return this.refuse(
        id,
        refusal.code === 'SecurityError' ? 'not-accepted' : 'unsupported-action',
        refusal,
      );
    }
    try {
      schemas.validate(action, 'req', payload);
    } catch (err) {
      this.inboundIds.shift();
      return this.refuse(id, 'invalid-payload', err as OcppError);
    }
    // A handler stuck on the store still gets the charge point an answer in time; the queue waits
    // for the handler itself, so later CALLs never overtake it.
    this.startDeadline(id, action);
    let answer: string;
    try {
      const result = await dispatcher.handle(action, payload as Payload, id);
      answer = encodeResult(id, this.ownAnswer(action, result));
    } catch (err) {
      if (err instanceof OcppError && err.code !== 'InternalError') {
        answer = encodeError(id, err.code, err.message, err.details);
      } else {
        // Our own fault (a store failure, a response that fails its schema): no detail leaves.
        this.options.observer.internalError(action, err as Error);
        answer = encodeError(id, 'InternalError', `${action} could not be processed.`);
      }
    } finally {
      this.handlingId = null;
      this.inboundIds.shift();
    }
    if (!this.late) this.options.peer.send(answer);
  }

  private startDeadline(id: string, action: string): void {
    this.handlingId = id;
    this.handlingAction = action;
    this.late = false;
    // A CALL still queued when the charge point left runs to its end; no answer can reach anyone.
    if (this.isClosed) return;
    this.handlingSince = this.clock.monotonic();
    if (this.deadline === null) this.armDeadline(this.options.callTimeoutMs);
  }

  private armDeadline(ms: number): void {
    this.deadline = this.clock.after(ms, this.onDeadline);
  }

  private readonly onDeadline = (): void => {
    this.deadline = null;
    const id = this.handlingId;
    if (id === null) return;
    const left = this.handlingSince + this.options.callTimeoutMs - this.clock.monotonic();
    // Whole milliseconds: Node keeps a list of timers per duration.
    if (left > 0) return this.armDeadline(Math.ceil(left));
    const action = this.handlingAction;
    this.late = true;
    this.options.observer.internalError(
      action,
      new Error(`no result within ${this.options.callTimeoutMs} ms`),
    );
    this.options.peer.send(encodeError(id, 'InternalError', `${action} could not be processed in time.`));
  };

  /** Our answer must fit its schema too; when it does not, the fault is ours, not the peer's. */
  private ownAnswer(action: string, result: Payload): Payload {
    try {
      this.options.schemas.validate(action, 'conf', result);
    } catch (err) {
      throw new Error(`our ${action} answer fails its schema: ${(err as Error).message}`, { cause: err });
    }
    return result;
  }

  private onResponse(frame: Extract<Frame, { kind: 'result' | 'error' }>): void {
    const pending = this.outbound.take(frame.id);
    if (pending === null) {
      // Never answered (section 4.2.3 answers CALLs only); counted so a misbehaving peer shows up.
      return this.options.observer.badMessage(
        'unknown-response-id',
        `${frame.kind === 'result' ? 'CALLRESULT' : 'CALLERROR'} for unknown id ${frame.id}`,
      );
    }
    if (frame.kind === 'error') {
      return pending.reject(new CallErrorResponse(frame.code, frame.description, frame.details));
    }
    try {
      this.options.schemas.validate(pending.action, 'conf', frame.payload);
    } catch (err) {
      this.options.observer.badMessage('invalid-response', (err as Error).message);
      return pending.reject(new InvalidResponseError(err as OcppError));
    }
    pending.resolve(frame.payload);
  }
}

import { type Clock } from '#broker/kit';
import { E, ProtocolViolation } from './errors.js';
import {
  type Args,
  CALL,
  type Dict,
  ERROR,
  INTERRUPT,
  INVOCATION,
  type Kwargs,
  messageName,
  RESULT,
  withPayload,
} from './messages.js';
import { Registrations } from './registrations.js';
import { type RemoteDealer } from './remote.js';
import { type PendingCall, type Session } from './wamp-session.js';
import { isValidUri, type UriRule } from './uri.js';

type CancelMode = 'skip' | 'kill' | 'killnowait';

/** Node timers fire at once above 2^31-1 ms; a longer call timeout is the same as none in practice. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A procedure the router itself implements (the session meta API): returns the RESULT payload. */
export type RouterProcedure = (
  caller: Session,
  args: Args,
  kwargs: Kwargs,
) => { args: Args; kwargs?: Kwargs } | { error: string; message: string };

export interface DealerOptions {
  readonly uriRule: UriRule;
  readonly maxRegistrationsPerSession: number;
  readonly maxPendingCallsPerSession: number;
  readonly procedures: ReadonlyMap<string, RouterProcedure>;
  /** Time for the calls' timeouts, injected (a ManualClock in the specs). */
  readonly clock: Clock;
  /** Cluster mode: registrations held by other nodes. */
  readonly remote?: RemoteDealer;
}

/** The RPC half of a realm: registrations (exact, prefix, wildcard; shared), calls in flight, cancel and timeout. */
export class Dealer {
  readonly registrations: Registrations;

  constructor(private readonly options: DealerOptions) {
    this.registrations = new Registrations({
      uriRule: options.uriRule,
      maxRegistrationsPerSession: options.maxRegistrationsPerSession,
      ...(options.remote && { remote: options.remote }),
    });
  }

  register(session: Session, request: number, options: Dict, uri: unknown): void {
    this.registrations.register(session, request, options, uri);
  }

  unregister(session: Session, request: number, id: number): void {
    this.registrations.unregister(session, request, id);
  }

  call(caller: Session, request: number, options: Dict, uri: unknown, args: Args, kwargs: Kwargs): void {
    if (caller.calls.has(request))
      throw new ProtocolViolation(`CALL request ${request} is already in flight`);
    if (!isValidUri(uri, this.options.uriRule))
      return caller.error(CALL, request, E.invalidUri, 'not a valid procedure URI');
    if (!caller.permissions.allows('call', uri)) {
      return caller.error(
        CALL,
        request,
        E.notAuthorized,
        `role ${caller.identity.authrole} may not call ${uri}`,
      );
    }
    const builtin = this.options.procedures.get(uri);
    if (builtin !== undefined) {
      const outcome = builtin(caller, args, kwargs);
      if ('error' in outcome) return caller.error(CALL, request, outcome.error, outcome.message);
      return caller.send(withPayload([RESULT, request, {}], outcome.args, outcome.kwargs));
    }
    const found = this.registrations.route(uri);
    const remote = this.options.remote;
    // An exact local registration outranks anything; otherwise another node's may (WAMP's order).
    const elsewhere =
      remote === undefined || found?.registration.match === 'exact'
        ? undefined
        : remote.route(uri, found?.registration);
    const route = elsewhere === undefined ? found : undefined;
    if (route === undefined && elsewhere === undefined) {
      return caller.error(CALL, request, E.noSuchProcedure, `no procedure ${uri}`);
    }
    const callee = route?.callee ?? (elsewhere as Session);
    const limit = this.options.maxPendingCallsPerSession;
    // A node's stand-in carries every call to that node; its callees' own limits apply there.
    if (caller.calls.size >= limit || (route !== undefined && callee.invocations.size >= limit)) {
      return caller.error(
        CALL,
        request,
        E.limitExceeded,
        `at most ${limit} calls in flight per caller and per callee`,
      );
    }
    const call: PendingCall = {
      caller,
      callRequest: request,
      callee,
      invocationRequest: callee.invocationIds.next(),
      wantsProgress: options['receive_progress'] === true,
      killing: false,
      timer: null,
    };
    caller.calls.set(request, call);
    callee.invocations.set(call.invocationRequest, call);
    this.armTimeout(call, options);
    if (route === undefined) return remote?.forward(call, uri, options, args, kwargs);
    const details: Dict = {};
    if (route.registration.match !== 'exact') details['procedure'] = uri;
    if (call.wantsProgress) details['receive_progress'] = true;
    if (options['disclose_me'] === true) {
      details['caller'] = caller.id;
      details['caller_authid'] = caller.identity.authid;
      details['caller_authrole'] = caller.identity.authrole;
    }
    callee.send(
      withPayload([INVOCATION, call.invocationRequest, route.registration.id, details], args, kwargs),
    );
  }

  /** A CALL's own timeout option: the caller gets `wamp.error.timeout` and the callee an INTERRUPT. */
  private armTimeout(call: PendingCall, options: Dict): void {
    const timeout = options['timeout'];
    if (
      typeof timeout === 'number' &&
      Number.isInteger(timeout) &&
      timeout > 0 &&
      timeout <= MAX_TIMEOUT_MS
    ) {
      call.timer = this.options.clock.after(timeout, () =>
        this.abandon(call, 'killnowait', E.timeout, `no result within ${timeout} ms`),
      );
    }
  }

  yield(callee: Session, request: number, options: Dict, args: Args, kwargs: Kwargs): void {
    const progress = options['progress'] === true;
    const call = this.invocation(callee, request, 'YIELD');
    if (call === null) return;
    if (progress) {
      // Progressive results go only to a caller that asked for them.
      if (call.wantsProgress)
        call.caller.send(withPayload([RESULT, call.callRequest, { progress: true }], args, kwargs));
      return;
    }
    this.finish(call);
    call.caller.send(withPayload([RESULT, call.callRequest, {}], args, kwargs));
  }

  error(
    callee: Session,
    requestType: number,
    request: number,
    details: Dict,
    error: unknown,
    args: Args,
    kwargs: Kwargs,
  ): void {
    if (requestType !== INVOCATION) {
      throw new ProtocolViolation(
        `ERROR may only answer an INVOCATION (68), not ${messageName(requestType)}`,
      );
    }
    if (typeof error !== 'string' || !isValidUri(error, 'loose'))
      throw new ProtocolViolation('ERROR needs a valid error URI');
    const call = this.invocation(callee, request, 'ERROR');
    if (call === null) return;
    this.finish(call);
    call.caller.send(withPayload([ERROR, CALL, call.callRequest, details, error], args, kwargs));
  }

  cancel(caller: Session, request: number, options: Dict): void {
    const call = caller.calls.get(request);
    // The call may have finished while the CANCEL was on its way: nothing to do.
    if (call === undefined || call.killing) return;
    const requested = options['mode'];
    const mode: CancelMode =
      requested === 'skip' || requested === 'kill' || requested === 'killnowait' ? requested : 'killnowait';
    if (mode === 'kill' && call.callee.supports('callee', 'call_canceling')) {
      call.killing = true;
      call.callee.send([INTERRUPT, call.invocationRequest, { mode: 'kill' }]);
      return;
    }
    this.abandon(call, mode, E.canceled, 'the call was canceled');
  }

  /** Undoes a leaving session's registrations and calls; callers waiting on it get `canceled`. */
  leave(session: Session): void {
    this.registrations.leave(session);
    for (const call of session.invocations.values()) {
      this.finish(call);
      call.caller.error(CALL, call.callRequest, E.canceled, 'the callee left');
    }
    for (const call of session.calls.values()) {
      this.settle(call);
      if (call.callee.supports('callee', 'call_canceling')) {
        call.callee.send([INTERRUPT, call.invocationRequest, { mode: 'killnowait', reason: E.canceled }]);
      }
    }
    session.calls.clear();
    session.invocations.clear();
  }

  /** The caller gets its error now; the callee may be told (INTERRUPT) and its late answer is dropped. */
  private abandon(call: PendingCall, mode: CancelMode, error: string, message: string): void {
    this.settle(call);
    call.caller.calls.delete(call.callRequest);
    if (mode !== 'skip' && call.callee.supports('callee', 'call_canceling')) {
      call.callee.send([INTERRUPT, call.invocationRequest, { mode: 'killnowait', reason: error }]);
    }
    call.caller.error(CALL, call.callRequest, error, message);
  }

  private finish(call: PendingCall): void {
    if (call.timer !== null) this.options.clock.cancel(call.timer);
    call.caller.calls.delete(call.callRequest);
    call.callee.invocations.delete(call.invocationRequest);
  }

  /** The caller is answered already: the invocation no longer counts against the callee's limit. */
  private settle(call: PendingCall): void {
    if (call.timer !== null) this.options.clock.cancel(call.timer);
    call.timer = null;
    call.callee.invocations.delete(call.invocationRequest);
  }

  /**
   * The call a YIELD or ERROR answers; null for one already settled (its answer is dropped, as the
   * advanced profile has it for a canceled or timed-out call); a violation for an ID never issued.
   * INVOCATION IDs are sequential per callee, so every settled one is known without remembering it:
   * a list of the newest let a caller that canceled enough calls get the callee thrown out.
   */
  private invocation(callee: Session, request: number, what: string): PendingCall | null {
    const call = callee.invocations.get(request);
    if (call !== undefined) return call;
    if (!callee.invocationIds.issued(request)) {
      throw new ProtocolViolation(`${what} for unknown invocation ${request}`);
    }
    return null;
  }
}

import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { type Response } from 'express';
import { CallQueueFullError, CallTimeoutError, ConnectionClosedError } from '../call-tracker.js';
import { ChargePointNotConnectedError, UnknownActionError } from '../ocpp-calls.service.js';
import { CallErrorResponse, InvalidResponseError } from '../errors.js';

type CallFailure =
  | ChargePointNotConnectedError
  | UnknownActionError
  | CallTimeoutError
  | CallQueueFullError
  | ConnectionClosedError
  | CallErrorResponse
  | InvalidResponseError;

function problem(err: CallFailure): { status: number; title: string; extra?: Record<string, unknown> } {
  if (err instanceof ChargePointNotConnectedError)
    return { status: 404, title: 'Charge point not connected' };
  if (err instanceof UnknownActionError) return { status: 404, title: 'No such action' };
  if (err instanceof CallTimeoutError) return { status: 504, title: 'Charge point did not answer' };
  if (err instanceof CallQueueFullError) return { status: 503, title: 'Too many calls waiting' };
  if (err instanceof ConnectionClosedError) return { status: 502, title: 'Charge point disconnected' };
  if (err instanceof InvalidResponseError) {
    return { status: 502, title: 'Invalid answer', extra: { ocppError: { code: err.error.code } } };
  }
  return {
    status: 502,
    title: 'Charge point answered CALLERROR',
    extra: { ocppError: { code: err.code, description: err.description, details: err.details } },
  };
}

/** The ways a call to a charge point fails, as problem+json (the admin API's one error shape). */
@Catch(
  ChargePointNotConnectedError,
  UnknownActionError,
  CallTimeoutError,
  CallQueueFullError,
  ConnectionClosedError,
  CallErrorResponse,
  InvalidResponseError,
)
export class OcppCallFilter implements ExceptionFilter<CallFailure> {
  catch(err: CallFailure, host: ArgumentsHost): void {
    const { status, title, extra } = problem(err);
    const res = host.switchToHttp().getResponse<Response>();
    if (status === 503) res.setHeader('Retry-After', '1');
    res
      .status(status)
      .type('application/problem+json')
      .send(JSON.stringify({ type: 'about:blank', title, status, detail: err.message, ...extra }));
  }
}

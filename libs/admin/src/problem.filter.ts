import { STATUS_CODES } from 'node:http';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { type Response } from 'express';
import { ConflictError, NotFoundError } from '#broker/store';
import { sendProblem, type FieldError } from './problem.js';

/** A 400 whose body names each bad field. */
export class InvalidFieldsException extends HttpException {
  constructor(readonly errors: readonly FieldError[]) {
    super('invalid request', 400);
  }
}

/** Every admin error leaves as application/problem+json; store errors map to 404 and 409. */
@Catch()
export class AdminProblemFilter implements ExceptionFilter {
  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (err instanceof InvalidFieldsException) {
      const fields = err.errors.map((e) => e.field).join(', ');
      return sendProblem(res, 400, 'Invalid request', `Invalid field(s): ${fields}.`, { errors: err.errors });
    }
    if (err instanceof NotFoundError) return sendProblem(res, 404, 'Not found', err.message);
    if (err instanceof ConflictError) return sendProblem(res, 409, 'Conflict', err.message);
    if (err instanceof HttpException) {
      const status = err.getStatus();
      return sendProblem(res, status, STATUS_CODES[status] ?? 'Error', detailOf(err));
    }
    sendProblem(res, 500, 'Internal Server Error', 'The request failed; the broker log has the details.');
    throw err;
  }
}

function detailOf(err: HttpException): string {
  const body = err.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? message : err.message;
}

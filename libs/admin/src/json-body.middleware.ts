import { type NextFunction, type Request, type Response } from 'express';
import express from 'express';
import { sendProblem } from './problem.js';

/**
 * How deep an admin body may nest. Every admin body is a flat object or one level of lists; the
 * validation that follows (class-transformer, class-validator) recurses, and a body 3,000 levels deep
 * within the size limit overflowed its stack (a 500).
 */
const MAX_BODY_DEPTH = 64;

/** Whether `value` nests deeper than `max` arrays and objects (iterative: no stack to overflow here). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Parses JSON bodies for the admin API only, answering 413 and 400 as problem+json. Nest's own body
 * parser is off: its errors would reach Express's HTML error page.
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, strict: true });
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err?: unknown) => {
      if ((err === undefined || err === null) && deeperThan(req.body, MAX_BODY_DEPTH)) {
        return sendProblem(
          res,
          400,
          'Bad Request',
          `The body is nested deeper than ${MAX_BODY_DEPTH} levels.`,
        );
      }
      if (err === undefined || err === null) return next();
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') {
        return sendProblem(res, 413, 'Payload Too Large', `The body is over ${limitBytes} bytes.`);
      }
      if (type === 'entity.parse.failed')
        return sendProblem(res, 400, 'Bad Request', 'The body is not valid JSON.');
      sendProblem(res, 400, 'Bad Request', 'The body could not be read.');
    });
  };
}

import { type NextFunction, type Request, type Response } from 'express';
import express from 'express';
import { sendProblem } from './problem.js';

/**
 * Parses JSON bodies for the admin API only, answering 413 and 400 as problem+json. Nest's own body
 * parser is off: its errors would reach Express's HTML error page.
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, strict: true });
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err?: unknown) => {
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

import { type Response } from 'express';

export interface FieldError {
  readonly field: string;
  readonly messages: readonly string[];
}

/** RFC 9457 problem details, the one error shape of the admin API (and of the handshake refusals). */
export function sendProblem(
  res: Response,
  status: number,
  title: string,
  detail: string,
  extra: { readonly errors?: readonly FieldError[] } = {},
): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="admin"');
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', title, status, detail, ...extra }));
}

import assert from 'node:assert/strict';
import type request from 'supertest';

/** An admin API refusal: `status`, as an RFC 9457 problem document with a readable detail. */
export function problem(res: request.Response, status: number): Record<string, unknown> {
  assert.equal(res.status, status, JSON.stringify(res.body ?? res.text));
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  assert.equal(body['status'], status);
  assert.equal(typeof body['detail'], 'string');
  return body;
}

/** The fields a 400 names, one per invalid field. */
export function badFields(res: request.Response): string[] {
  const body = problem(res, 400);
  return (body['errors'] as { field: string }[]).map((e) => e.field);
}

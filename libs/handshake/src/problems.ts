import { type EndpointSpec, type Reject } from './types.js';

export function reject(
  status: number,
  title: string,
  detail: string,
  endpoint: EndpointSpec | null = null,
  headers: Readonly<Record<string, string>> = {},
): Reject {
  return { kind: 'reject', status, headers, problem: { title, detail }, endpoint };
}

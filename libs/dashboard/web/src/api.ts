/** The admin credential the operator typed in: kept for this tab only, sent in a header, never in a URL. */
const TOKEN_KEY = 'broker-dashboard-token';

/** The admin API beside the page (<prefix>/dashboard/ and <prefix>/admin/v1/), whatever the prefix. */
export const ADMIN_API = '../admin/v1/';

export function savedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

export function authHeaders(): Record<string, string> {
  const token = savedToken();
  return token === null ? {} : { Authorization: `Bearer ${token}` };
}

/** An admin API refusal, with the problem's own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The words of a problem+json answer (or the status line when it has none). */
export async function problemOf(res: Response): Promise<string> {
  try {
    const problem = (await res.json()) as { title?: string; detail?: string };
    return problem.detail ?? problem.title ?? res.statusText;
  } catch {
    return res.statusText;
  }
}

/** One admin API call (`path` under /admin/v1/), JSON both ways (a 204 answers undefined). */
export async function api<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${ADMIN_API}${path}`, {
    method,
    headers: { ...authHeaders(), ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new ApiError(res.status, await problemOf(res));
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** An admin API answer as it came, refusals included: its status, a refusal's title, its body. */
export interface RawAnswer {
  readonly status: number;
  /** A problem+json answer's title, else the status line's text. */
  readonly title: string;
  /** The JSON body, its text when it is not JSON, or null when there is none. */
  readonly body: unknown;
}

/** POSTs `body` as JSON to `path` (under /admin/v1/) and resolves with what answers, whatever its status. */
export async function postRaw(path: string, body: unknown): Promise<RawAnswer> {
  const res = await fetch(`${ADMIN_API}${path}`, {
    method: 'POST',
    headers: { ...authHeaders(), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text === '' ? null : text;
  try {
    if (text !== '') parsed = JSON.parse(text);
  } catch {
    // Shown as the text it is.
  }
  // Only a refusal is a problem: a 200's own `title` field is the answer's, not the status's.
  const title = res.ok ? undefined : (parsed as { title?: unknown } | null)?.title;
  return { status: res.status, title: typeof title === 'string' ? title : res.statusText, body: parsed };
}

/** A query string of the fields that are set. */
export function query(fields: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== '') params.set(key, value);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** Saves what `path` (under /admin/v1/) answers as a file: fetched with the credential, which a link cannot send. */
export async function download(path: string, filename: string): Promise<void> {
  const res = await fetch(`${ADMIN_API}${path}`, { headers: authHeaders() });
  if (!res.ok) throw new ApiError(res.status, await problemOf(res));
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // Once the browser has taken it.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

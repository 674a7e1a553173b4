/** A JSON document fetched from an identity provider, and how long it may be kept (its `max-age`). */
export interface FetchedJson {
  readonly body: unknown;
  /** Seconds from `Cache-Control: max-age` (0 for `no-store` or `no-cache`); null when it says nothing. */
  readonly maxAgeSec: number | null;
}

/** A POST's form body and headers (token introspection); none: a GET. */
export interface JsonRequest {
  readonly form?: URLSearchParams;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * GETs `url` (or POSTs the form) and parses its JSON: within `timeoutMs` for the whole answer, at most
 * `maxBytes` of body (read as it comes, so a provider sending more is cut off there), no redirects, 200
 * only.
 */
export async function fetchJson(
  url: URL,
  timeoutMs: number,
  maxBytes: number,
  request: JsonRequest = {},
): Promise<FetchedJson> {
  const signal = AbortSignal.timeout(timeoutMs);
  const headers = { accept: 'application/json', ...request.headers };
  let response: Response;
  try {
    response = await fetch(url, {
      signal,
      redirect: 'error',
      headers,
      ...(request.form === undefined ? {} : { method: 'POST', body: request.form }),
    });
  } catch (err) {
    throw new Error(`${url.origin} did not answer: ${describe(err)}`, { cause: err });
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`${url.origin} answered ${response.status}`);
  }
  const text = await readCapped(response, maxBytes, url);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${url.origin} answered with something that is not JSON`);
  }
  return { body, maxAgeSec: maxAgeOf(response.headers.get('cache-control')) };
}

async function readCapped(response: Response, maxBytes: number, url: URL): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new Error(`${url.origin} answered with more than ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (signal(err)) throw new Error(`${url.origin} did not answer in time`, { cause: err });
    throw err;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function maxAgeOf(header: string | null): number | null {
  if (header === null) return null;
  if (/(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|$)/i.test(header)) return 0;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(header);
  return match === null ? null : Number(match[1]);
}

function signal(err: unknown): boolean {
  const name = (err as { name?: unknown })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

function describe(err: unknown): string {
  if (signal(err)) return 'timed out';
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  return String(cause?.code ?? cause?.message ?? (err as Error).message);
}

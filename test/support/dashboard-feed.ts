/** The dashboard's feed as a client reads it: its status, its first snapshot event, and a way to close it. */
export interface OpenFeed {
  readonly status: number;
  /** Resolves with the text of the first snapshot event (rejects when the feed was refused). */
  readonly first: Promise<string>;
  readonly close: () => void;
}

/** Opens `<base>/admin/v1/dashboard/feed` (base: http://host:port) with the given headers. */
export async function openFeed(base: string, headers: Record<string, string> = {}): Promise<OpenFeed> {
  const controller = new AbortController();
  const res = await fetch(`${base}/admin/v1/dashboard/feed`, { headers, signal: controller.signal });
  const close = (): void => controller.abort();
  if (!res.ok || res.body === null) {
    const first = Promise.reject(new Error(`the feed answered ${res.status}`));
    first.catch(() => undefined);
    return { status: res.status, first, close };
  }
  const reader = res.body.getReader();
  const first = (async () => {
    let text = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      text += Buffer.from(next.value).toString('utf8');
      const end = text.indexOf('\n\n');
      if (end !== -1) return text.slice(0, end);
    }
    throw new Error('the feed ended before its first event');
  })();
  first.catch(() => undefined);
  return { status: res.status, first, close };
}

/** The JSON of a snapshot event's data line. */
export function snapshotOf<T>(event: string): T {
  return JSON.parse(event.slice(event.indexOf('data: ') + 'data: '.length)) as T;
}

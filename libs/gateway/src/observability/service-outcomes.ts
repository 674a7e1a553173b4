/** Characters of a failed check's message that are kept. */
const MESSAGE_MAX = 200;
/**
 * What looks like credentials in a URL (`//user:password@`): never shown. Up to the last `@` before the
 * next `/`, as a password may hold an `@` of its own.
 */
const URL_CREDENTIALS = /\/\/[^/\s]*@/g;

/** A service's health as its checks found it. */
export interface ServiceStatus {
  /** What serves it, when there is a choice (the store's backend: sqlite, postgres); null otherwise. */
  readonly kind: string | null;
  /** Whether its last check answered; null before the first ended. */
  readonly up: boolean | null;
  /** Epoch ms when its last check ended; null before the first. */
  readonly checkedAt: number | null;
  /** Its last failure: the error's first line, shortened, and when (epoch ms); null if none yet. */
  readonly lastError: { readonly message: string; readonly at: number } | null;
}

interface Outcome {
  up: boolean | null;
  checkedAt: number | null;
  /** performance.now() when the last check started (for `due`). */
  startedAt: number;
  running: boolean;
  lastError: { message: string; at: number } | null;
}

/** The last outcome of each service's check, and whether one runs now. */
export class ServiceOutcomes {
  private readonly outcomes = new Map<string, Outcome>();

  /** Whether a check of `name` should start: none runs, and the last started over `maxAgeMs` ago. */
  due(name: string, maxAgeMs: number): boolean {
    const outcome = this.outcomes.get(name);
    return outcome === undefined || (!outcome.running && performance.now() - outcome.startedAt >= maxAgeMs);
  }

  /** A check of `name` starts; the function it returns takes its end: null, or what it failed with. */
  started(name: string): (failure: unknown) => void {
    const outcome = this.outcomes.get(name) ?? {
      up: null,
      checkedAt: null,
      startedAt: 0,
      running: false,
      lastError: null,
    };
    this.outcomes.set(name, outcome);
    outcome.startedAt = performance.now();
    outcome.running = true;
    return (failure) => {
      const at = Date.now();
      outcome.running = false;
      outcome.checkedAt = at;
      outcome.up = failure === null;
      if (failure !== null) outcome.lastError = { message: shortMessage(failure), at };
    };
  }

  status(name: string, kind: string | null): ServiceStatus {
    const outcome = this.outcomes.get(name);
    const lastError = outcome?.lastError ?? null;
    return {
      kind,
      up: outcome?.up ?? null,
      checkedAt: outcome?.checkedAt ?? null,
      lastError: lastError === null ? null : { ...lastError },
    };
  }
}

/** An error's first line, without URL credentials, shortened to MESSAGE_MAX characters. */
export function shortMessage(failure: unknown): string {
  const text = failure instanceof Error ? failure.message : String(failure);
  const line = (text.split('\n', 1)[0] ?? '').replace(URL_CREDENTIALS, '//').trim() || 'failed';
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX)}…` : line;
}

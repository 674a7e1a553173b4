import { compileAllowlist } from '#broker/handshake';
import { type OriginEntries } from '#broker/auth';
import { type Logger } from 'pino';
import { type OriginsRepository } from './origins.repository.js';
import { type OriginEntry } from './store.types.js';

/**
 * The handshake reads allowlists from memory, never from the database. Local writes reload at once;
 * writes by another node sharing PostgreSQL when its change notice arrives (cluster mode), or at the
 * next poll.
 */
export class OriginCache implements OriginEntries {
  private global: readonly string[] = [];
  private byEndpoint = new Map<string, string[]>();
  private readonly listeners: (() => void)[] = [];
  private signature = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly origins: OriginsRepository,
    private readonly logger: Logger,
  ) {
    origins.onChange(() => void this.refresh());
  }

  async start(pollMs: number | null): Promise<void> {
    await this.refresh();
    if (pollMs !== null) this.timer = setInterval(() => void this.refresh(), pollMs).unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  forEndpoint(path: string): readonly string[] {
    const own = this.byEndpoint.get(path);
    return own === undefined ? this.global : [...this.global, ...own];
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Reloads the allowlists from the store (a failed read keeps the last ones). */
  async refresh(): Promise<void> {
    let entries: OriginEntry[];
    try {
      entries = await this.origins.list();
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'origin allowlist reload failed; keeping the last one',
      );
      return;
    }
    const signature = entries.map((e) => e.id).join(',');
    if (signature === this.signature) return;
    this.signature = signature;
    const global: string[] = [];
    const byEndpoint = new Map<string, string[]>();
    for (const entry of entries) {
      if (!isValid(entry.origin)) {
        this.logger.warn({ id: entry.id }, 'ignoring an invalid origin allowlist entry in the store');
        continue;
      }
      if (entry.endpoint === null) global.push(entry.origin);
      else byEndpoint.set(entry.endpoint, [...(byEndpoint.get(entry.endpoint) ?? []), entry.origin]);
    }
    this.global = global;
    this.byEndpoint = byEndpoint;
    for (const listener of this.listeners) listener();
  }
}

function isValid(origin: string): boolean {
  try {
    compileAllowlist([origin]);
    return true;
  } catch {
    return false;
  }
}

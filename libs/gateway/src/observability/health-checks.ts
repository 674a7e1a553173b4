import { Injectable } from '@nestjs/common';
import { ServiceOutcomes, type ServiceStatus } from './service-outcomes.js';

export type { ServiceStatus } from './service-outcomes.js';

/** How long /health/ready waits for one check before calling its service down. */
const CHECK_TIMEOUT_MS = 2000;

export interface HealthCheck {
  /** Resolves when the service answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
  /**
   * Set for a service that new connections depend on (NATS in cluster mode): while it is known to be
   * down, upgrades are refused with 503 and this text as the reason, and connections already open go on.
   */
  readonly outage?: () => string | null;
  /** What serves it, when there is a choice (the store's backend: sqlite, postgres). */
  readonly kind?: string;
}

/**
 * The services the node depends on, as other modules register them (the store, NATS): /health/ready
 * asks each, and the handshake refuses new connections while one that gates them is down. Each check's
 * last outcome is kept, for the dashboard's nodes table (`status`).
 */
@Injectable()
export class HealthChecks {
  private readonly checks = new Map<string, HealthCheck>();
  private readonly details = new Map<string, () => unknown>();
  private readonly outcomes = new ServiceOutcomes();

  add(name: string, check: HealthCheck): void {
    if (this.checks.has(name)) throw new Error(`a health check named '${name}' is already registered`);
    this.checks.set(name, check);
  }

  /**
   * A detail /health/ready shows beside the services without deciding readiness: a part that degrades
   * rather than fails (the identity provider's keys, still verifying while the provider is down).
   */
  addDetail(name: string, read: () => unknown): void {
    if (this.details.has(name)) throw new Error(`a health detail named '${name}' is already registered`);
    this.details.set(name, read);
  }

  /** Each detail as it is now; null when none is registered. */
  detailsNow(): Record<string, unknown> | null {
    if (this.details.size === 0) return null;
    return Object.fromEntries([...this.details].map(([name, read]) => [name, read()]));
  }

  /** Why new connections cannot be served now, or null. */
  outage(): string | null {
    for (const check of this.checks.values()) {
      const reason = check.outage?.() ?? null;
      if (reason !== null) return reason;
    }
    return null;
  }

  /** Each service's state, asked in parallel, each within its time limit. */
  async report(): Promise<Record<string, 'up' | 'down'>> {
    const entries = await Promise.all(
      [...this.checks].map(
        async ([name, check]) => [name, (await this.run(name, check)) ? 'up' : 'down'] as const,
      ),
    );
    return Object.fromEntries(entries);
  }

  /**
   * A service's last outcome, from /health/ready's checks or from the one this starts, in the
   * background, when the last is older than `maxAgeMs` and none runs: at most one check per `maxAgeMs`
   * however often it is read. Null when no check has that name.
   */
  status(name: string, maxAgeMs: number): ServiceStatus | null {
    const check = this.checks.get(name);
    if (check === undefined) return null;
    if (this.outcomes.due(name, maxAgeMs)) void this.run(name, check);
    return this.outcomes.status(name, check.kind ?? null);
  }

  /** Runs one check within its time limit and keeps its outcome; true when it answered. */
  private async run(name: string, check: HealthCheck): Promise<boolean> {
    const done = this.outcomes.started(name);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
        CHECK_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([check.check(), timeout]);
      done(null);
      return true;
    } catch (err) {
      done(err);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}

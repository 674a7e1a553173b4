import { Injectable } from '@nestjs/common';

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
}

/**
 * The services the node depends on, as other modules register them (the store, NATS): /health/ready
 * asks each, and the handshake refuses new connections while one that gates them is down.
 */
@Injectable()
export class HealthChecks {
  private readonly checks = new Map<string, HealthCheck>();
  private readonly details = new Map<string, () => unknown>();

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
      [...this.checks].map(async ([name, check]) => [name, (await answers(check)) ? 'up' : 'down'] as const),
    );
    return Object.fromEntries(entries);
  }
}

async function answers(check: HealthCheck): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check.check().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

import { type Principal } from '#broker/handshake';
import { CLOSE } from './close-codes.js';

export interface FirstMessageLimits {
  readonly timeoutMs: number;
  /** Bytes held before the credential verifies (the auth message included). */
  readonly maxBytes: number;
  /** Messages held before the credential verifies. */
  readonly maxQueued: number;
}

export interface FirstMessageOutcome {
  accepted(principal: Principal, held: readonly (readonly [Buffer, boolean])[]): void;
  refused(code: number, reason: string): void;
}

/**
 * Holds a connection after the 101 until `{"type":"auth","token":"..."}` arrives and verifies.
 * Nothing reaches the module before that; what arrives meanwhile is held, within limits, and
 * handed over in order once the credential is good.
 */
export class FirstMessageAuth {
  private readonly held: (readonly [Buffer, boolean])[] = [];
  private heldBytes = 0;
  private state: 'waiting' | 'verifying' | 'done' = 'waiting';
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: FirstMessageLimits,
    private readonly verify: (token: string) => Promise<Principal>,
    private readonly outcome: FirstMessageOutcome,
  ) {
    this.timer = setTimeout(() => this.finish(4408, 'authentication timeout'), limits.timeoutMs);
  }

  push(data: Buffer, isBinary: boolean): void {
    if (this.state === 'done') return;
    this.heldBytes += data.byteLength;
    if (this.heldBytes > this.limits.maxBytes) {
      this.finish(CLOSE.policyViolation, 'too much data before authentication');
      return;
    }
    if (this.state === 'waiting' && !isBinary) {
      const token = readAuthMessage(data);
      if (token === null) {
        this.finish(4401, 'malformed auth message: "token" must be a non-empty string');
        return;
      }
      if (token !== undefined) {
        this.state = 'verifying';
        this.verify(token).then(
          (principal) => this.succeed(principal),
          (err: Error) => this.finish(4401, `authentication failed: ${err.message}`),
        );
        return;
      }
    }
    if (this.held.length >= this.limits.maxQueued) {
      this.finish(CLOSE.policyViolation, 'too many messages before authentication');
      return;
    }
    this.held.push([data, isBinary]);
  }

  /** The connection went away first. */
  cancel(): void {
    this.state = 'done';
    clearTimeout(this.timer);
  }

  private succeed(principal: Principal): void {
    if (this.state === 'done') return;
    this.state = 'done';
    clearTimeout(this.timer);
    this.outcome.accepted(principal, this.held);
  }

  private finish(code: number, reason: string): void {
    if (this.state === 'done') return;
    this.state = 'done';
    clearTimeout(this.timer);
    this.outcome.refused(code, reason);
  }
}

/** undefined: not an auth message; null: an auth message without a usable token. */
function readAuthMessage(data: Buffer): string | null | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'auth') {
    return undefined;
  }
  const token = (message as { token?: unknown }).token;
  return typeof token === 'string' && token.length > 0 ? token : null;
}

import { type Principal } from '#broker/handshake';
import { CLOSE, HeldInput, type HoldLimits } from '#broker/kit';
import { type FirstMessageOutcome } from './first-message-policy.js';

/** `maxBytes` counts the auth message too. */
export interface FirstMessageLimits extends HoldLimits {
  readonly timeoutMs: number;
}

export interface AuthMessageGateOutcome {
  accepted(principal: Principal, held: readonly (readonly [Buffer, boolean])[]): void;
  refused(code: number, reason: string): void;
}

/**
 * Holds a connection after the 101 until `{"type":"auth","token":"..."}` arrives and the first-message
 * policy accepts its token. Nothing reaches the module before that; what arrives meanwhile is held
 * (HeldInput, within the endpoint's limits) and handed over in order once the credential is good.
 */
export class AuthMessageGate {
  private readonly held: HeldInput<readonly [Buffer, boolean]>;
  private state: 'waiting' | 'verifying' | 'done' = 'waiting';
  private readonly timer: NodeJS.Timeout;

  constructor(
    limits: FirstMessageLimits,
    private readonly authenticate: (credential: { readonly token: string }) => Promise<FirstMessageOutcome>,
    private readonly outcome: AuthMessageGateOutcome,
  ) {
    this.held = new HeldInput(limits);
    this.timer = setTimeout(() => this.finish(4408, 'authentication timeout'), limits.timeoutMs);
  }

  push(data: Buffer, isBinary: boolean): void {
    if (this.state === 'done') return;
    if (this.state === 'waiting' && !isBinary) {
      const token = readAuthMessage(data);
      if (token !== undefined) {
        const tooMuch = this.held.charge(data.byteLength);
        if (tooMuch !== null) return this.finish(CLOSE.policyViolation, tooMuch);
        if (token === null)
          return this.finish(4401, 'malformed auth message: "token" must be a non-empty string');
        this.state = 'verifying';
        void this.authenticate({ token }).then((outcome) => {
          // A token that does not open this endpoint closes as the handshake would refuse it (403 there).
          if (!outcome.ok && outcome.refusal === 'forbidden')
            this.finish(CLOSE.policyViolation, outcome.reason);
          else if (!outcome.ok) this.finish(4401, `authentication failed: ${outcome.reason}`);
          // With a credential an accepted outcome always has its principal.
          else if (outcome.principal !== null) this.succeed(outcome.principal);
        });
        return;
      }
    }
    const refusal = this.held.push([data, isBinary], data.byteLength);
    if (refusal !== null) this.finish(CLOSE.policyViolation, refusal);
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
    this.outcome.accepted(principal, this.held.take());
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

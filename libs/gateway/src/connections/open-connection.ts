import { type Duplex } from 'node:stream';
import { type AddressDebts } from '../http-front/address-debts.js';
import { CLOSE, type HoldLimits, type InputBudget } from '#broker/kit';
import { opensEndpoint } from '#broker/auth';
import { type EndpointConfig } from '#broker/config';
import { type Accept, type EndpointSpec, type ModuleRefusal, type Principal } from '#broker/handshake';
import { type Logger } from 'pino';
import { type WebSocket } from 'ws';
import { nextConnectionId } from './connection-ids.js';
import { type ConnectionRegistry, type TrackedConnection } from './connection-registry.js';
import { onCredentialExpiry } from '../upgrade/credential-expiry.js';
import { AuthMessageGate, type AuthMessageGateOutcome } from '../upgrade/auth-message-gate.js';
import {
  authenticateFirstMessage,
  type CredentialChecks,
  type FirstMessageCredential,
  type FirstMessageOutcome,
} from '../upgrade/first-message-policy.js';
import { type ConnectionMetrics } from '../observability/metrics.js';
import { type RegisteredSubprotocol } from './subprotocol-registry.js';
import { type ConnectionContext } from './subprotocol.types.js';
import { type ConnectionObserver, WsConnection } from './ws-connection.js';

/** The gateway services every open connection uses: one object, shared. */
export interface OpenConnectionServices {
  readonly registry: ConnectionRegistry;
  readonly checks: CredentialChecks;
  readonly logger: Logger;
  /** Loop time each client address still owes, carried from one connection to the next. */
  readonly debts: AddressDebts;
}

/**
 * One connection after the 101, as the gateway tracks it: its counters, its principal and the
 * credential's expiry, the message-type policy, first-message authentication when the handshake asked
 * for it, and the clean-up on close. A class with methods rather than a dozen closures over shared
 * state: an idle broker holds one of these per connection, and closures and their contexts were a
 * tenth of an idle connection's heap.
 */
export class OpenConnection implements TrackedConnection, ConnectionObserver, AuthMessageGateOutcome {
  readonly connection: WsConnection;
  readonly endpoint: EndpointSpec;
  /** Epoch milliseconds (a number: a Date is 96 bytes of heap per connection). */
  readonly openedAt = Date.now();
  principal: Principal | null;
  alive = true;
  bytesIn = 0;
  bytesOut = 0;
  private gate: AuthMessageGate | null = null;
  private stopExpiry: (() => void) | null = null;
  /** Created on first use: most connections never log after the handshake line. */
  private logger: Logger | null = null;

  // The decision itself is not kept: its slot-release closure holds the limit check's context.
  readonly protocol: string | null;
  readonly params: Readonly<Record<string, string>>;
  /** Kept (with the handshake's request) only on an endpoint that a guard names. */
  private readonly guardAgain: Accept['guardAgain'];

  constructor(
    readonly ws: WebSocket,
    socket: Duplex,
    decision: Accept,
    readonly module: RegisteredSubprotocol,
    readonly remoteAddress: string,
    private readonly config: EndpointConfig,
    private readonly metrics: ConnectionMetrics,
    private readonly services: OpenConnectionServices,
  ) {
    this.endpoint = decision.endpoint;
    this.protocol = decision.protocol;
    this.params = decision.params;
    this.principal = decision.principal;
    this.guardAgain = decision.guardAgain;
    this.connection = new WsConnection(
      nextConnectionId(),
      ws,
      socket,
      config.outboundBufferCap,
      this,
      config.slowConsumerDropBytes,
      config.inputBudget === false ? null : config.inputBudget,
    );
  }

  get id(): string {
    return this.connection.id;
  }

  get authMode(): 'none' | 'optional' | 'required' {
    return this.config.auth.mode;
  }

  /** Tracks the connection and hands it to its module, now or once first-message auth accepts it. */
  open(awaitFirstMessageAuth: boolean): void {
    this.services.registry.add(this);
    this.metrics.accepted++;
    this.metrics.open++;
    if (!awaitFirstMessageAuth) return this.start(this.principal);
    this.gate = new AuthMessageGate(
      { ...this.holdLimits, timeoutMs: this.config.auth.firstMessageTimeoutMs },
      (credential) => this.authenticate(credential, null),
      this,
    );
  }

  get holdLimits(): HoldLimits {
    const auth = this.config.auth;
    return { maxQueued: auth.firstMessageMaxQueued, maxBytes: auth.firstMessageMaxBytes };
  }

  /**
   * The first-message policy (first-message-policy.ts) for this endpoint; the principal a credential
   * brings then goes through the endpoint's handshake guards, as a handshake's would.
   */
  async authenticate(
    credential: FirstMessageCredential | null,
    handshakePrincipal: Principal | null,
  ): Promise<FirstMessageOutcome> {
    const endpoint = {
      mode: this.config.auth.mode,
      path: this.endpoint.path,
      timeoutMs: this.config.auth.firstMessageTimeoutMs,
    };
    const outcome = await authenticateFirstMessage(
      credential,
      handshakePrincipal,
      endpoint,
      this.services.checks,
    );
    if (!outcome.ok || credential === null || outcome.principal === null || this.guardAgain === null)
      return outcome;
    const verdict = await this.guardAgain(outcome.principal);
    if ('status' in verdict) return guardRefusal(verdict);
    return { ok: true, principal: verdict.principal ?? outcome.principal };
  }

  received(data: Buffer, isBinary: boolean): void {
    const traffic = this.metrics.traffic;
    traffic.messagesIn++;
    traffic.bytesIn += data.byteLength;
    this.bytesIn += data.byteLength;
    this.alive = true;
    // The auth message is text even for a binary protocol: the gate reads it before the type policy.
    if (this.gate !== null) return this.gate.push(data, isBinary);
    this.deliver(data, isBinary);
  }

  ponged(): void {
    this.alive = true;
  }

  errored(err: Error): void {
    this.services.logger.debug({ connection: this.id, err: err.message }, 'websocket error');
  }

  closed(code: number): void {
    this.gate?.cancel();
    this.stopExpiry?.();
    this.services.registry.remove(this);
    this.metrics.open--;
    this.services.logger.debug({ connection: this.id, code }, 'connection closed');
  }

  sent(bytes: number): void {
    this.bytesOut += bytes;
    this.metrics.traffic.messagesOut++;
    this.metrics.traffic.bytesOut += bytes;
  }

  dropped(): void {
    this.metrics.traffic.messagesDropped++;
  }

  owedByAddress(): number {
    return this.services.debts.owed(this.remoteAddress);
  }

  budgetStarted(budget: InputBudget): void {
    this.services.debts.opened(this.remoteAddress, budget);
  }

  budgetEnded(budget: InputBudget): void {
    const limits = this.config.inputBudget;
    if (limits !== false) this.services.debts.closed(this.remoteAddress, budget, limits.share);
  }

  throttled(ms: number): void {
    this.metrics.traffic.inputPauses++;
    this.log().debug({ pauseMs: Math.round(ms) }, 'input over its share of the loop, reads paused');
  }

  overflowed(buffered: number): void {
    this.log().warn({ buffered }, 'outbound buffer limit exceeded, closing 1008');
  }

  failed(err: Error): void {
    this.log().error({ err: err.message }, 'module handler failed; connection closed 1011');
  }

  accepted(principal: Principal, held: readonly (readonly [Buffer, boolean])[]): void {
    this.gate = null;
    this.log().info({ subject: principal.subject }, 'first-message authentication accepted');
    this.start(principal);
    for (const [data, isBinary] of held) this.deliver(data, isBinary);
  }

  refused(code: number, reason: string): void {
    this.log().info({ code, reason }, 'first-message authentication refused');
    this.connection.close(code, reason);
  }

  /**
   * The module authenticated the client by its own first message (see ConnectionContext.identify).
   * However it did (WAMP-CRA, a charge point's key), `endpoint:` scopes hold as at the handshake: a
   * principal that does not open this endpoint closes the connection 1008, as the handshake refuses it 403.
   */
  identify(principal: Principal): void {
    // A check that finished after the client left: no one to list, and an expiry timer would keep
    // this connection in memory until the credential expires.
    if (this.ws.readyState !== this.ws.OPEN) return;
    const path = this.endpoint.path;
    if (!opensEndpoint(principal, path)) {
      this.log().info({ subject: principal.subject }, 'module credential does not open this endpoint');
      return this.connection.close(CLOSE.policyViolation, `this credential does not open ${path}`);
    }
    this.principal = principal;
    this.watchExpiry(principal);
  }

  private deliver(data: Buffer, isBinary: boolean): void {
    const policy = this.module.options.messages ?? 'any';
    if (policy === 'text' && isBinary)
      return this.connection.close(CLOSE.unsupportedData, 'binary messages are not accepted');
    if (policy === 'binary' && !isBinary)
      return this.connection.close(CLOSE.unsupportedData, 'text messages are not accepted');
    this.connection.deliver(data, isBinary);
  }

  private start(principal: Principal | null): void {
    this.principal = principal;
    this.watchExpiry(principal);
    const context = new ModuleContext(this, principal);
    try {
      // open() is typed void, but an async one is assignable: its rejection must not escape either.
      const result: unknown = this.module.handler.open(this.connection, context);
      if (result instanceof Promise) result.catch((err: unknown) => this.openFailed(err));
    } catch (err) {
      this.openFailed(err);
    }
  }

  private openFailed(err: unknown): void {
    this.log().error({ err: (err as Error).message }, 'module failed to open the connection');
    this.connection.close(CLOSE.internalError, 'internal error');
  }

  private watchExpiry(principal: Principal | null): void {
    this.stopExpiry?.();
    this.stopExpiry = onCredentialExpiry(principal, () => {
      this.log().info({ subject: principal?.subject }, 'credential expired, closing 1008');
      this.connection.close(CLOSE.policyViolation, 'credential expired');
    });
  }

  private log(): Logger {
    return (this.logger ??= this.services.logger.child({
      connection: this.id,
      endpoint: this.endpoint.path,
      module: this.module.options.name,
    }));
  }
}

/** What a module is told about its connection (ConnectionContext), with the gateway's callbacks. */
class ModuleContext implements ConnectionContext {
  constructor(
    private readonly owner: OpenConnection,
    readonly principal: Principal | null,
  ) {}

  get id(): string {
    return this.owner.id;
  }

  get endpoint(): string {
    return this.owner.endpoint.path;
  }

  get protocol(): string | null {
    return this.owner.protocol;
  }

  get params(): Readonly<Record<string, string>> {
    return this.owner.params;
  }

  get remoteAddress(): string {
    return this.owner.remoteAddress;
  }

  get authMode(): 'none' | 'optional' | 'required' {
    return this.owner.authMode;
  }

  get holdLimits(): HoldLimits {
    return this.owner.holdLimits;
  }

  async authenticate(credential: FirstMessageCredential | null): Promise<FirstMessageOutcome> {
    const outcome = await this.owner.authenticate(credential, this.principal);
    if (outcome.ok && credential !== null && outcome.principal !== null)
      this.owner.identify(outcome.principal);
    return outcome;
  }

  identify(principal: Principal): void {
    this.owner.identify(principal);
  }
}

/** A guard's refusal of a first-message principal, as the protocol refuses a credential (its status's kind). */
function guardRefusal(refusal: ModuleRefusal): FirstMessageOutcome {
  const reason = `a handshake guard refused: ${refusal.detail}`;
  if (refusal.status === 401) return { ok: false, refusal: 'bad-credential', reason };
  if (refusal.status === 429 || refusal.status >= 500) return { ok: false, refusal: 'unavailable', reason };
  return { ok: false, refusal: 'forbidden', reason };
}

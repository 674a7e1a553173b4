import { DEFAULT_AUTH_POLICY } from '#broker/config';
import { type Principal } from '#broker/handshake';
import { authenticateFirstMessage, type Connection, type ConnectionContext } from '#broker/gateway';

/**
 * A Connection with no socket under it, for unit tests of a subprotocol module: it records what the
 * module sends and how it closes, and the test plays the client with `receive` and `clientCloses`.
 */
export class TestConnection implements Connection {
  /** Every message the module sent, in order (text as strings, binary as Buffers). */
  readonly sent: (string | Buffer)[] = [];
  /** How the module or the client closed it, once closed. */
  closedWith: { readonly code: number; readonly reason: string } | null = null;
  bufferedAmount = 0;
  /** Set to play a client that stopped reading: sendEvent then drops (returns false). */
  dropEvents = false;
  /** The loop time the module charged to this connection after its handlers returned (Connection.charge). */
  charged = 0;
  private readonly messageHandlers: ((data: Buffer, isBinary: boolean) => void)[] = [];
  private readonly closeHandlers: ((code: number, reason: string) => void)[] = [];

  constructor(readonly id = 'test-connection') {}

  send(data: string | Uint8Array): void {
    if (this.closedWith !== null) return;
    this.sent.push(typeof data === 'string' ? data : Buffer.from(data));
  }

  /** Events are recorded as sends, unless `dropEvents`. */
  sendEvent(data: string | Uint8Array): boolean {
    if (this.dropEvents) return false;
    this.send(data);
    return true;
  }

  close(code = 1000, reason = ''): void {
    if (this.closedWith !== null) return;
    this.closedWith = { code, reason };
    for (const handler of this.closeHandlers) handler(code, reason);
  }

  charge(ms: number): void {
    this.charged += ms;
  }

  onMessage(handler: (data: Buffer, isBinary: boolean) => void): void {
    this.messageHandlers.push(handler);
  }

  onClose(handler: (code: number, reason: string) => void): void {
    this.closeHandlers.push(handler);
  }

  /** The client sends one message (a string is text, a Buffer or Uint8Array binary). */
  receive(data: string | Uint8Array): void {
    const isBinary = typeof data !== 'string';
    const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    for (const handler of this.messageHandlers) handler(buffer, isBinary);
  }

  /** The client closes (or its socket drops: 1006). */
  clientCloses(code = 1000, reason = ''): void {
    this.close(code, reason);
  }

  /** The text messages sent, parsed as JSON. */
  sentJson(): unknown[] {
    return this.sent.filter((m): m is string => typeof m === 'string').map((m) => JSON.parse(m) as unknown);
  }
}

/** A ConnectionContext as the handshake would make it; `identified` records what the module told it. */
export interface TestContext extends ConnectionContext {
  readonly identified: Principal[];
}

/**
 * A handshake outcome for a module's unit test: endpoint '/test', no parameters, no principal and
 * auth mode 'none' unless given; `authenticate` is the broker's first-message policy with a verifier
 * that refuses every token and no password check, unless given.
 */
export function testContext(overrides: Partial<Omit<ConnectionContext, 'identify'>> = {}): TestContext {
  const identified: Principal[] = [];
  const context: TestContext = {
    id: 'test-connection',
    endpoint: '/test',
    protocol: null,
    params: {},
    remoteAddress: '127.0.0.1',
    principal: null,
    authMode: 'none',
    holdLimits: {
      maxQueued: DEFAULT_AUTH_POLICY.firstMessageMaxQueued,
      maxBytes: DEFAULT_AUTH_POLICY.firstMessageMaxBytes,
    },
    authenticate: async (credential) => {
      const endpoint = {
        mode: context.authMode,
        path: context.endpoint,
        timeoutMs: DEFAULT_AUTH_POLICY.firstMessageTimeoutMs,
      };
      const outcome = await authenticateFirstMessage(credential, context.principal, endpoint, NO_CREDENTIALS);
      if (outcome.ok && credential !== null && outcome.principal !== null) identified.push(outcome.principal);
      return outcome;
    },
    ...overrides,
    identified,
    identify: (principal) => void identified.push(principal),
  };
  return context;
}

const NO_CREDENTIALS = {
  verifyToken: () => Promise.reject(new Error('no token is valid in this test context')),
  passwords: null,
};

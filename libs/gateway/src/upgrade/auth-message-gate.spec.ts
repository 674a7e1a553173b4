import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Principal } from '#broker/handshake';
import { AuthMessageGate, type FirstMessageLimits } from './auth-message-gate.js';
import { type FirstMessageOutcome } from './first-message-policy.js';

type Held = readonly (readonly [Buffer, boolean])[];
type Event =
  | { readonly kind: 'accepted'; readonly principal: Principal; readonly held: Held }
  | { readonly kind: 'refused'; readonly code: number; readonly reason: string };

const LIMITS: FirstMessageLimits = { timeoutMs: 5_000, maxBytes: 8192, maxQueued: 16 };

function principal(subject: string): Principal {
  return { subject, claims: { sub: subject }, carrier: 'first-message' };
}

interface Deferred {
  readonly promise: Promise<Principal>;
  resolve(p: Principal): void;
  reject(err: Error): void;
}

function deferred(): Deferred {
  let resolve!: (p: Principal) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<Principal>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A gate with a recording outcome. `verify` defaults to accepting any token as its own subject.
 * `settled` resolves with the first outcome.
 */
/** The policy's outcome for a verifier (the policy itself has its own spec: first-message-policy.spec.ts). */
function outcomeOf(verify: (token: string) => Promise<Principal>) {
  return async ({ token }: { readonly token: string }): Promise<FirstMessageOutcome> => {
    try {
      return { ok: true, principal: await verify(token) };
    } catch (err) {
      return { ok: false, refusal: 'bad-credential', reason: (err as Error).message };
    }
  };
}

function harness(
  limits: Partial<FirstMessageLimits> = {},
  verify: (token: string) => Promise<Principal> = async (token) => principal(token),
): { gate: AuthMessageGate; events: Event[]; tokens: string[]; settled: Promise<Event> } {
  const events: Event[] = [];
  const tokens: string[] = [];
  let settle!: (e: Event) => void;
  const settled = new Promise<Event>((resolve) => {
    settle = resolve;
  });
  const record = (event: Event): void => {
    events.push(event);
    settle(event);
  };
  const gate = new AuthMessageGate(
    { ...LIMITS, ...limits },
    outcomeOf((token) => {
      tokens.push(token);
      return verify(token);
    }),
    {
      accepted: (p, held) => record({ kind: 'accepted', principal: p, held: [...held] }),
      refused: (code, reason) => record({ kind: 'refused', code, reason }),
    },
  );
  return { gate, events, tokens, settled };
}

function text(value: unknown): Buffer {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
}

function auth(token: unknown): Buffer {
  return text({ type: 'auth', token });
}

/** Lets pending promise callbacks run. */
async function flush(): Promise<void> {
  await sleep(5);
}

describe('AuthMessageGate acceptance', () => {
  it('accepts an auth message sent first, with the principal and nothing held', async () => {
    const { gate, events, tokens, settled } = harness();
    gate.push(auth('alice'), false);
    const event = await settled;
    assert.deepEqual(tokens, ['alice']);
    assert.equal(event.kind, 'accepted');
    assert.ok(event.kind === 'accepted');
    assert.deepEqual(event.principal, principal('alice'));
    assert.deepEqual(event.held, []);
    await flush();
    assert.equal(events.length, 1);
    gate.cancel();
  });

  it('holds messages sent before the auth message and hands them over in order', async () => {
    const { gate, events, tokens, settled } = harness();
    const before: [Buffer, boolean][] = [
      [text('hello'), false],
      [text({ type: 'join', room: 'lobby' }), false],
      [Buffer.from([0, 1, 2, 255]), true],
      [text({ type: 'auth' }).subarray(0, 5), false],
      [text({ type: 'Auth', token: 'x' }), false],
      [text('null'), false],
      [text('[{"type":"auth","token":"x"}]'), false],
    ];
    for (const [data, isBinary] of before) gate.push(data, isBinary);
    assert.equal(events.length, 0);
    assert.deepEqual(tokens, []);
    gate.push(auth('bob'), false);
    const event = await settled;
    assert.ok(event.kind === 'accepted', JSON.stringify(event));
    assert.equal(event.principal.subject, 'bob');
    assert.deepEqual(event.held, before);
    assert.equal(events.length, 1);
  });

  it('holds binary frames without parsing them, even one that looks like an auth message', async () => {
    const { gate, events, tokens, settled } = harness();
    const binary = auth('from-binary');
    gate.push(binary, true);
    await flush();
    assert.deepEqual(tokens, []);
    assert.equal(events.length, 0);
    gate.push(auth('from-text'), false);
    const event = await settled;
    assert.deepEqual(tokens, ['from-text']);
    assert.ok(event.kind === 'accepted');
    assert.equal(event.principal.subject, 'from-text');
    assert.deepEqual(event.held, [[binary, true]]);
  });

  it('holds what arrives while the token is being verified, including a second auth message', async () => {
    const pending = deferred();
    const { gate, events, tokens, settled } = harness({}, () => pending.promise);
    gate.push(text('early'), false);
    gate.push(auth('first'), false);
    gate.push(text('during'), false);
    gate.push(auth('second'), false);
    gate.push(Buffer.from([9]), true);
    await flush();
    assert.equal(events.length, 0);
    assert.deepEqual(tokens, ['first']);
    pending.resolve(principal('carol'));
    const event = await settled;
    assert.ok(event.kind === 'accepted');
    assert.equal(event.principal.subject, 'carol');
    assert.deepEqual(event.held, [
      [text('early'), false],
      [text('during'), false],
      [auth('second'), false],
      [Buffer.from([9]), true],
    ]);
  });

  it('passes the principal the verifier returned through unchanged', async () => {
    const returned: Principal = {
      subject: 'dave',
      claims: { sub: 'dave', role: 'op' },
      carrier: 'first-message',
    };
    const { gate, settled } = harness({}, async () => returned);
    gate.push(auth('t'), false);
    const event = await settled;
    assert.ok(event.kind === 'accepted');
    assert.equal(event.principal, returned);
  });
});

describe('AuthMessageGate refusals', () => {
  it('refuses an auth message whose token is not a non-empty string with 4401', async () => {
    for (const message of [
      { type: 'auth', token: 42 },
      { type: 'auth', token: '' },
      { type: 'auth' },
      { type: 'auth', token: null },
      { type: 'auth', token: ['t'] },
      { type: 'auth', token: { value: 't' } },
    ]) {
      const { gate, events, tokens } = harness();
      gate.push(text(message), false);
      assert.equal(events.length, 1, JSON.stringify(message));
      const [event] = events;
      assert.ok(event?.kind === 'refused');
      assert.equal(event.code, 4401);
      assert.match(event.reason, /token/);
      assert.deepEqual(tokens, []);
    }
  });

  it('refuses with 4401 and the error message when verification fails', async () => {
    const { gate, events, settled } = harness({}, async () => {
      throw new Error('the token has expired');
    });
    gate.push(text('held'), false);
    gate.push(auth('stale'), false);
    const event = await settled;
    assert.ok(event.kind === 'refused');
    assert.equal(event.code, 4401);
    assert.match(event.reason, /the token has expired/);
    await flush();
    assert.equal(events.length, 1);
  });

  it('refuses with 4408 when no auth message arrives in time', async () => {
    const started = performance.now();
    const { gate, events, settled } = harness({ timeoutMs: 50 });
    gate.push(text('not auth'), false);
    gate.push(Buffer.from([1]), true);
    const event = await settled;
    const elapsed = performance.now() - started;
    assert.ok(event.kind === 'refused');
    assert.equal(event.code, 4408);
    assert.match(event.reason, /timeout/);
    assert.ok(elapsed >= 40, `refused after ${elapsed} ms`);
    assert.equal(events.length, 1);
  });

  it('refuses with 4408 when verification is still pending at the timeout, and ignores its late result', async () => {
    const pending = deferred();
    const { gate, events, settled } = harness({ timeoutMs: 50 }, () => pending.promise);
    gate.push(auth('slow'), false);
    const event = await settled;
    assert.ok(event.kind === 'refused');
    assert.equal(event.code, 4408);
    pending.resolve(principal('slow'));
    await flush();
    assert.equal(events.length, 1);
  });

  it('refuses with 1008 when too many messages are held', async () => {
    const { gate, events } = harness({ maxQueued: 2 });
    gate.push(text('one'), false);
    gate.push(Buffer.from([2]), true);
    assert.equal(events.length, 0);
    gate.push(text('three'), false);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.ok(event?.kind === 'refused');
    assert.equal(event.code, 1008);
    assert.match(event.reason, /too many messages/);
  });

  it('does not count the auth message as held', async () => {
    const { gate, settled } = harness({ maxQueued: 1 });
    gate.push(text('one'), false);
    gate.push(auth('erin'), false);
    const event = await settled;
    assert.ok(event.kind === 'accepted');
    assert.deepEqual(event.held, [[text('one'), false]]);
  });

  it('accepts with maxQueued 0 when nothing is sent before the auth message', async () => {
    const { gate, settled } = harness({ maxQueued: 0 });
    gate.push(auth('frank'), false);
    const event = await settled;
    assert.ok(event.kind === 'accepted');
    assert.deepEqual(event.held, []);
  });

  it('refuses with 1008 when too many bytes arrive, counting the auth message', async () => {
    const { gate, events } = harness({ maxBytes: 10 });
    gate.push(Buffer.alloc(6), true);
    gate.push(Buffer.alloc(4), true);
    assert.equal(events.length, 0, 'exactly maxBytes is allowed');
    gate.push(Buffer.alloc(1), true);
    const [event] = events;
    assert.ok(event?.kind === 'refused');
    assert.equal(event.code, 1008);
    assert.match(event.reason, /too much data/);

    const big = harness({ maxBytes: 20 });
    big.gate.push(auth('a-token-longer-than-the-limit'), false);
    assert.deepEqual(big.tokens, [], 'an oversized auth message must not be verified');
    assert.ok(big.events[0]?.kind === 'refused' && big.events[0].code === 1008);
  });

  it('counts bytes that arrive while verifying', async () => {
    const pending = deferred();
    const message = auth('t');
    const { gate, events } = harness({ maxBytes: message.byteLength + 3 }, () => pending.promise);
    gate.push(message, false);
    gate.push(Buffer.alloc(3), true);
    assert.equal(events.length, 0);
    gate.push(Buffer.alloc(1), true);
    assert.ok(events[0]?.kind === 'refused' && events[0].code === 1008);
    pending.resolve(principal('late'));
    await flush();
    assert.equal(events.length, 1);
  });
});

describe('AuthMessageGate after an outcome', () => {
  it('ignores pushes after acceptance and does not change what was handed over', async () => {
    let handed: Held | undefined;
    const events: string[] = [];
    const gate = new AuthMessageGate(
      LIMITS,
      outcomeOf(async (t) => principal(t)),
      {
        accepted: (_p, held) => {
          handed = held;
          events.push('accepted');
        },
        refused: (code) => events.push(`refused ${code}`),
      },
    );
    gate.push(text('x'), false);
    gate.push(auth('gina'), false);
    await flush();
    assert.deepEqual(events, ['accepted']);
    assert.equal(handed?.length, 1);
    gate.push(text('after'), false);
    gate.push(auth('again'), false);
    gate.push(Buffer.alloc(100_000), true);
    await flush();
    assert.deepEqual(events, ['accepted']);
    assert.equal(handed?.length, 1);
  });

  it('ignores pushes after a refusal and verifies nothing more', async () => {
    const { gate, events, tokens } = harness();
    gate.push(auth(''), false);
    assert.equal(events.length, 1);
    gate.push(auth('good'), false);
    gate.push(Buffer.alloc(100_000), true);
    await flush();
    assert.equal(events.length, 1);
    assert.deepEqual(tokens, []);
  });

  it('does nothing when verification resolves after cancel()', async () => {
    const pending = deferred();
    const { gate, events } = harness({}, () => pending.promise);
    gate.push(auth('t'), false);
    gate.cancel();
    pending.resolve(principal('t'));
    await flush();
    assert.deepEqual(events, []);
  });

  it('does nothing when verification rejects after cancel()', async () => {
    const pending = deferred();
    const { gate, events } = harness({}, () => pending.promise);
    gate.push(auth('t'), false);
    gate.cancel();
    pending.reject(new Error('bad'));
    await flush();
    assert.deepEqual(events, []);
  });

  it('does not time out after cancel()', async () => {
    const { gate, events } = harness({ timeoutMs: 20 });
    gate.cancel();
    await sleep(60);
    assert.deepEqual(events, []);
    gate.push(auth('t'), false);
    await flush();
    assert.deepEqual(events, []);
  });

  it('does not time out after success', async () => {
    const { gate, events, settled } = harness({ timeoutMs: 50 });
    gate.push(auth('hank'), false);
    assert.equal((await settled).kind, 'accepted');
    await sleep(100);
    assert.equal(events.length, 1);
  });

  it('does not time out after a refusal', async () => {
    const { gate, events } = harness({ timeoutMs: 50, maxQueued: 0 });
    gate.push(text('x'), false);
    assert.equal(events.length, 1);
    await sleep(100);
    assert.equal(events.length, 1);
  });

  it('ignores a verification that fails after the timeout', async () => {
    const pending = deferred();
    const { gate, events, settled } = harness({ timeoutMs: 30 }, () => pending.promise);
    gate.push(auth('t'), false);
    assert.ok((await settled).kind === 'refused');
    pending.reject(new Error('late'));
    await flush();
    assert.equal(events.length, 1);
  });
});

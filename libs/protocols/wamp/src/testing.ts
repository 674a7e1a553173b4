import { authenticateFirstMessage } from '#broker/gateway';
import { ManualClock, type EventPeerPort } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type Credentials } from './authenticate.js';
import { Permissions, type PermissionRule } from './permissions.js';
import { type RealmSettings } from './realm.js';
import { Router, type RouterLimits } from './router.js';
import { SessionProtocol } from './session-protocol.js';
import { craKey } from './wampcra.js';

/** Fixtures for the unit specs: the real router core, driven with plain strings and a manual clock. */

export class TestClient implements EventPeerPort {
  readonly sent: unknown[][] = [];
  closedWith: { code: number; reason: string } | null = null;
  protocol!: SessionProtocol;
  /** The WELCOME, once `join` got it. */
  welcome: unknown[] = [];

  send(text: string): void {
    this.sent.push(JSON.parse(text) as unknown[]);
  }

  /** Recorded with the rest: nothing in the unit specs stops reading. */
  sendEvent(text: string): void {
    this.send(text);
  }

  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
    this.protocol.closed();
  }

  receive(message: unknown[]): void {
    this.protocol.receive(JSON.stringify(message));
  }

  /** Everything sent since the last take. */
  take(): unknown[][] {
    return this.sent.splice(0);
  }

  /** Sends and returns the one message answered (fails when there is not exactly one). */
  request(message: unknown[]): unknown[] {
    this.take();
    this.receive(message);
    const answers = this.take();
    if (answers.length !== 1) throw new Error(`expected one answer, got ${JSON.stringify(answers)}`);
    return answers[0] as unknown[];
  }

  get sessionId(): number {
    return this.welcome[1] as number;
  }
}

const OPEN: PermissionRule[] = [
  { uri: '', match: 'prefix', allow: ['call', 'register', 'publish', 'subscribe'] },
];

export const ALICE: Principal = { subject: 'alice', claims: {}, carrier: 'first-message' };

export function realm(name: string, overrides: Partial<RealmSettings> = {}): RealmSettings {
  return {
    name,
    uriRule: 'loose',
    anonymousRole: 'anonymous',
    authenticatedRole: 'authenticated',
    roles: new Map([
      ['anonymous', new Permissions(OPEN)],
      ['authenticated', new Permissions(OPEN)],
      ['reader', new Permissions([{ uri: 'com.public.', match: 'prefix', allow: ['subscribe', 'call'] }])],
    ]),
    craUsers: new Map([['joe', { authid: 'joe', role: 'authenticated', key: craKey('joe-secret') }]]),
    ...overrides,
  };
}

export const LIMITS: RouterLimits = {
  maxSubscriptionsPerSession: 3,
  maxRegistrationsPerSession: 3,
  maxPendingCallsPerSession: 2,
  authTimeoutMs: 1000,
  maxRealms: 3,
};

export const ROLES = {
  caller: { features: { call_canceling: true, progressive_call_results: true } },
  callee: { features: { call_canceling: true, progressive_call_results: true } },
  publisher: {},
  subscriber: {},
};

/** Credentials as a spec states them: the verifier's and the store's answers, fed to the real first-message policy. */
export interface TestCredentials extends Partial<Omit<Credentials, 'authenticate'>> {
  verifyToken?(token: string): Promise<Principal>;
  verifyPassword?(username: string, password: Uint8Array): Promise<Principal | null>;
}

export function testCredentials(overrides: TestCredentials = {}): Credentials {
  const { verifyToken, verifyPassword, ...rest } = overrides;
  const checks = {
    verifyToken:
      verifyToken ??
      ((token: string) =>
        token === 'good-token' ? Promise.resolve(ALICE) : Promise.reject(new Error('bad token'))),
    passwords: verifyPassword === undefined ? null : { verifyPassword },
  };
  const endpoint = { mode: 'optional', path: '/ws', timeoutMs: 5000 } as const;
  return {
    principal: null,
    anonymousAllowed: true,
    authenticate: (credential) => authenticateFirstMessage(credential, null, endpoint, checks),
    ...rest,
  };
}

export function testRouter(options: { realms?: RealmSettings[]; autoRealm?: RealmSettings | null } = {}) {
  const clock = new ManualClock();
  const published: { realm: string; topic: string; args: unknown }[] = [];
  const router = new Router({
    realms: options.realms ?? [realm('realm1')],
    autoRealm: options.autoRealm ?? null,
    limits: LIMITS,
    clock,
    published: (realmName, topic, args) => published.push({ realm: realmName, topic, args }),
  });
  const connect = (overrides: TestCredentials = {}): TestClient => {
    const client = new TestClient();
    client.protocol = new SessionProtocol(router, client, testCredentials(overrides));
    return client;
  };
  const join = (realmName = 'realm1', roles: object = ROLES): TestClient => {
    const client = connect();
    client.receive([1, realmName, { roles }]);
    const [welcome] = client.take();
    if (welcome?.[0] !== 2) throw new Error(`no WELCOME: ${JSON.stringify(welcome)}`);
    client.welcome = welcome;
    return client;
  };
  return { router, clock, published, connect, join };
}

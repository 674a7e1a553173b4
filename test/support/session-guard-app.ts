import { type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  ForbiddenException,
  Inject,
  Injectable,
  Module,
  type OnModuleDestroy,
  UnauthorizedException,
} from '@nestjs/common';
import { RedisStore } from 'connect-redis';
import { unsign } from 'cookie-signature';
import express from 'express';
import session, { type SessionData } from 'express-session';
import { createClient } from 'redis';
import {
  HandshakeGuard,
  type HandshakeGuardContext,
  type HandshakeGuardHandler,
  HandshakeRefusal,
} from '#broker/gateway';

declare module 'express-session' {
  interface SessionData {
    user?: string;
    tenant?: string;
  }
}

export const SESSION_SECRET = 'the application backend session secret';
const SESSION_STORE = Symbol('SESSION_STORE');

/**
 * The application backend a guard trusts: express with express-session in the machine's Redis, where
 * `/login?user=..&tenant=..` starts a session and `/logout` ends it. Its cookie is what the browser
 * then sends with the WebSocket handshake.
 */
export class SessionApp {
  private constructor(
    private readonly server: Server,
    readonly store: RedisStore,
    private readonly client: ReturnType<typeof createClient>,
  ) {}

  static async start(prefix: string): Promise<SessionApp> {
    const client = createClient({ url: 'redis://127.0.0.1:6379' });
    await client.connect();
    const store = new RedisStore({ client, prefix });
    const app = express();
    app.use(session({ store, secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
    app.get('/login', (req, res) => {
      req.session.user = String(req.query['user']);
      req.session.tenant = String(req.query['tenant'] ?? 'acme');
      res.send('ok');
    });
    app.get('/logout', (req, res) => req.session.destroy(() => res.send('bye')));
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    return new SessionApp(server, store, client);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Logs in as `user` and returns the session cookie (`connect.sid=...`). express-session sends the
   * headers before its store has the session and ends the body after: the body is read to the end.
   */
  async login(user: string, tenant = 'acme'): Promise<string> {
    const response = await fetch(`${this.url}/login?user=${user}&tenant=${tenant}`);
    await response.text();
    const cookie = response.headers.get('set-cookie');
    if (cookie === null) throw new Error('no session cookie');
    return cookie.split(';')[0] as string;
  }

  async logout(cookie: string): Promise<void> {
    await (await fetch(`${this.url}/logout`, { headers: { cookie } })).text();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    await this.client.quit();
  }
}

/** The session store the guard reads: the application's own service, injected. */
@Injectable()
export class Sessions implements OnModuleDestroy {
  private readonly client = createClient({ url: 'redis://127.0.0.1:6379' });
  private store: RedisStore | null = null;

  constructor(@Inject(SESSION_STORE) private readonly prefix: string) {}

  /** The session behind a signed `connect.sid` cookie value, or null. */
  async lookup(cookie: string | undefined): Promise<SessionData | null> {
    if (cookie === undefined || !cookie.startsWith('s:')) return null;
    const sid = unsign(cookie.slice(2), SESSION_SECRET);
    if (sid === false) return null;
    if (this.store === null) {
      await this.client.connect();
      this.store = new RedisStore({ client: this.client, prefix: this.prefix });
    }
    const store = this.store;
    return new Promise((resolve, reject) =>
      store.get(sid, (err, data) => (err ? reject(err as Error) : resolve(data ?? null))),
    );
  }

  async onModuleDestroy(): Promise<void> {
    if (this.client.isOpen) await this.client.quit();
  }
}

/** Authenticates the handshake from the application's session cookie; no session, no WebSocket. */
@HandshakeGuard({ endpoints: ['/app'] })
export class SessionGuard implements HandshakeGuardHandler {
  constructor(private readonly sessions: Sessions) {}

  async canActivate(context: HandshakeGuardContext): Promise<boolean> {
    const data = await this.sessions.lookup(context.cookie('connect.sid'));
    if (data?.user === undefined) throw new UnauthorizedException('no session: log in first');
    context.authenticate(data.user, { tenant: data.tenant });
    return true;
  }
}

/**
 * A tenant rule after it: one tenant is shut out, one user is held back; it sees the principal so far.
 * On `/mqtt`, `/mqtt-open` and `/later` the credential may come in the first message: it lets a connection without a
 * principal go on (the endpoint's own rule asks for one) and runs again for the principal that comes.
 */
@HandshakeGuard({ endpoints: ['/app', '/mqtt', '/mqtt-open', '/later'], order: 1 })
export class TenantGuard implements HandshakeGuardHandler {
  canActivate(context: HandshakeGuardContext): boolean {
    if (context.principal?.claims['tenant'] === 'closed')
      throw new ForbiddenException('your tenant is closed');
    if (context.principal?.subject === 'greedy') {
      throw new HandshakeRefusal(429, 'too many devices for this user', { 'Retry-After': '30' });
    }
    return context.principal?.subject !== 'nobody';
  }
}

/** A guard that never answers (a database that hangs). */
@HandshakeGuard({ endpoints: ['/slow'] })
export class HangingGuard implements HandshakeGuardHandler {
  canActivate(): Promise<boolean> {
    return new Promise(() => undefined);
  }
}

/** A guard with a bug. */
@HandshakeGuard({ endpoints: ['/broken'] })
export class BrokenGuard implements HandshakeGuardHandler {
  canActivate(): boolean {
    throw new TypeError("Cannot read properties of undefined (reading 'tenant')");
  }
}

@Module({})
export class SessionGuardsModule {
  static withPrefix(prefix: string) {
    return {
      module: SessionGuardsModule,
      providers: [
        { provide: SESSION_STORE, useValue: prefix },
        Sessions,
        SessionGuard,
        TenantGuard,
        HangingGuard,
        BrokenGuard,
      ],
    };
  }
}

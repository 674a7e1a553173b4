import { opensEndpoint } from '#broker/auth';
import { type HandshakeHooks, type ModuleCheckContext } from '#broker/handshake';
import { withinTime } from './check-timeout.js';
import { type HandshakeGuards } from './handshake-guards.js';
import { type SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { type TokenVerifier } from './token-verifier.js';

/** How long a module's own handshake check may take before the handshake fails with 503. */
const MODULE_CHECK_TIMEOUT_MS = 5000;

/**
 * The checks of the sans-IO decision that need I/O or a module: a token's signature, the
 * credential's `endpoint:` scopes, the application's handshake guards, and the module's own check (is
 * this charge point known?).
 */
export function handshakeHooks(
  verifier: TokenVerifier,
  subprotocols: SubprotocolRegistry,
  guards: HandshakeGuards,
): HandshakeHooks {
  return {
    ...(guards.any ? { guard: (ctx: ModuleCheckContext) => guards.run(ctx) } : {}),
    verifyToken: (token, carrier) => verifier.verify(token, carrier),
    authorize: (principal, endpoint) =>
      opensEndpoint(principal, endpoint.path)
        ? null
        : { title: 'Endpoint not allowed', detail: `This credential does not open ${endpoint.path}.` },
    checkModule: (name, ctx) => {
      const handler = subprotocols.get(name)?.handler;
      if (handler?.checkHandshake === undefined) return Promise.resolve(null);
      return withinTime(
        handler.checkHandshake({
          endpoint: ctx.endpoint.path,
          params: ctx.params,
          principal: ctx.principal,
          secure: ctx.request.raw.secure,
          clientCertificate: ctx.request.raw.clientCertificate ?? null,
          header: (name) => ctx.request.values(name.toLowerCase()),
        }),
        MODULE_CHECK_TIMEOUT_MS,
        { status: 503, title: 'Handshake check timed out', detail: 'Try again later.' },
      );
    },
  };
}

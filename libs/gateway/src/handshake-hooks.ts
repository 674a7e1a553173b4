import { opensEndpoint } from '#broker/auth';
import { type HandshakeHooks } from '#broker/handshake';
import { type SubprotocolRegistry } from './subprotocol-registry.js';
import { type TokenVerifier } from './token-verifier.js';

/** How long a module's own handshake check may take before the handshake fails with 503. */
const MODULE_CHECK_TIMEOUT_MS = 5000;

/**
 * The checks of the sans-IO decision that need I/O or a module: a token's signature, the
 * credential's `endpoint:` scopes, and the module's own check (is this charge point known?).
 */
export function handshakeHooks(verifier: TokenVerifier, subprotocols: SubprotocolRegistry): HandshakeHooks {
  return {
    verifyToken: (token, carrier) => verifier.verify(token, carrier),
    authorize: (principal, endpoint) =>
      opensEndpoint(principal, endpoint.path)
        ? null
        : { title: 'Endpoint not allowed', detail: `This credential does not open ${endpoint.path}.` },
    checkModule: (name, ctx) => {
      const handler = subprotocols.get(name)?.handler;
      if (handler?.checkHandshake === undefined) return Promise.resolve(null);
      return withTimeout(
        handler.checkHandshake({
          endpoint: ctx.endpoint.path,
          params: ctx.params,
          principal: ctx.principal,
          secure: ctx.request.raw.secure,
          clientCertificate: ctx.request.raw.clientCertificate ?? null,
          header: (name) => ctx.request.values(name.toLowerCase()),
        }),
      );
    },
  };
}

function withTimeout<T>(promise: Promise<T>): Promise<T | { status: number; title: string; detail: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ status: number; title: string; detail: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 503, title: 'Handshake check timed out', detail: 'Try again later.' }),
      MODULE_CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

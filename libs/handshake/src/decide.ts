import { extractCredential, withoutCredentialItems } from './extract-credential.js';
import { hasToken } from './header-tokens.js';
import { negotiateDeflate } from './negotiate-deflate.js';
import { parseRequest } from './parse-request.js';
import { parseSubprotocols } from './parse-subprotocols.js';
import { reject } from './problems.js';
import { isSameOrigin } from './same-origin.js';
import {
  type CertificateSubject,
  type ClientCertificate,
  CredentialError,
  CredentialUnavailableError,
  type EndpointSpec,
  type HandshakeContext,
  type HandshakeDecision,
  type HandshakeRequest,
  type ModuleRefusal,
  type ParsedRequest,
  type Principal,
  type Accept,
  type Reject,
} from './types.js';
import { extendedConnectProblem, upgradeProblem } from './request-validity.js';

const VERSION_HEADERS = { 'Sec-WebSocket-Version': '13', Upgrade: 'websocket' } as const;

/**
 * The whole handshake contract, in the order the checks run: request validity, path, connection
 * limits (cheap shedding before any signature is checked), version, origin, authentication,
 * subprotocol, module check, extensions. Each `return reject(...)` is one row of the table in
 * docs/handshake.md; decide.spec.ts has a test per row.
 */
export async function decideHandshake(
  raw: HandshakeRequest,
  ctx: HandshakeContext,
): Promise<HandshakeDecision> {
  const req = parseRequest(raw);
  const found = findEndpoint(ctx.endpoints, req.pathname);
  // Two spellings must never name one thing: a parameter that does not decode is refused, not kept as sent.
  if (found !== null && 'malformed' in found) return reject(400, 'Bad path', found.malformed, found.spec);
  let invalid: Reject | null;
  if (raw.httpVersion === '2.0') {
    invalid = extendedConnectProblem(raw, req);
  } else {
    const connection = req.values('connection');
    const upgrade = req.values('upgrade');
    const wantsUpgrade = hasToken(connection, 'upgrade');
    if (!wantsUpgrade && upgrade.length === 0) {
      if (found === null || (raw.method !== 'GET' && raw.method !== 'HEAD')) return { kind: 'pass' };
      return { kind: 'plain', endpoint: found.spec, acceptsHtml: acceptsHtml(req) };
    }
    // Off our paths, only a WebSocket upgrade is our business: others (curl's h2c) are ignored, as Node ignores them.
    if (found === null && !upgrade.some((u) => u.trim().toLowerCase() === 'websocket'))
      return { kind: 'pass' };
    invalid = upgradeProblem(raw, req, upgrade, wantsUpgrade);
  }
  if (invalid !== null) return invalid;
  const offeredRaw = parseSubprotocols(req.values('sec-websocket-protocol'));
  if (offeredRaw === null) {
    return reject(
      400,
      'Bad Sec-WebSocket-Protocol',
      'Sec-WebSocket-Protocol must be a comma-separated list of distinct tokens.',
    );
  }

  // Path.
  if (found === null) return reject(404, 'No such endpoint', `No WebSocket endpoint at ${req.pathname}.`);
  const endpoint = found.spec;

  // Connection limits.
  const { limits, counts } = ctx;
  const retry = { 'Retry-After': String(limits.retryAfterSec) };
  if (counts.draining) {
    return reject(
      503,
      'Shutting down',
      'The broker is shutting down; reconnect to another node.',
      endpoint,
      retry,
    );
  }
  if (counts.unavailable !== null) {
    return reject(503, 'Service unavailable', counts.unavailable, endpoint, retry);
  }
  if (counts.total() >= limits.maxConnections) {
    return reject(503, 'Too many connections', 'The broker is at its connection limit.', endpoint, retry);
  }
  if (endpoint.maxConnections !== undefined && counts.forEndpoint(endpoint) >= endpoint.maxConnections) {
    return reject(503, 'Too many connections', 'This endpoint is at its connection limit.', endpoint, retry);
  }
  if (counts.forAddress(raw.remoteAddress) >= limits.maxConnectionsPerAddress) {
    return reject(429, 'Too many connections', 'Too many connections from your address.', endpoint, retry);
  }
  // Before any credential is checked: a reconnect loop costs a table lookup per attempt.
  const wait = counts.takeHandshake(raw.remoteAddress);
  if (wait > 0) {
    return reject(429, 'Too many handshakes', 'Too many handshakes from your address; slow down.', endpoint, {
      'Retry-After': String(wait),
    });
  }
  // The slot is held from here, so concurrent handshakes waiting on a signature or a module check
  // cannot overshoot the limits; it is released on any refusal, or by the gateway once the
  // connection is counted (or the socket dies first).
  const release = counts.reserve(endpoint, raw.remoteAddress);
  try {
    const decision = await decideAfterLimits(req, ctx, endpoint, found.params, offeredRaw, release);
    if (decision.kind !== 'accept') release();
    return decision;
  } catch (err) {
    release();
    throw err;
  }
}

async function decideAfterLimits(
  req: ParsedRequest,
  ctx: HandshakeContext,
  endpoint: EndpointSpec,
  params: Readonly<Record<string, string>>,
  offeredRaw: readonly string[],
  /** Frees the held connection slot: the accept carries it, for the gateway to call. */
  release: () => void,
): Promise<Reject | Accept> {
  // Version.
  const versions = req.values('sec-websocket-version');
  if (versions.length !== 1 || (versions[0] as string).trim() !== '13') {
    return reject(
      426,
      'Unsupported WebSocket version',
      'Only WebSocket version 13 (RFC 6455) is supported.',
      endpoint,
      // HTTP/2 has no Upgrade header (RFC 9113 section 8.2.2).
      req.raw.httpVersion === '2.0' ? { 'Sec-WebSocket-Version': '13' } : VERSION_HEADERS,
    );
  }

  // Origin.
  const origins = req.values('origin');
  if (origins.length > 1)
    return reject(400, 'Bad Origin header', 'At most one Origin header is allowed.', endpoint);
  const origin = origins[0]?.trim();
  const originAllowed =
    origin === undefined
      ? !endpoint.requireOrigin
      : endpoint.origins === null
        ? isSameOrigin(origin, req.raw.forwardedHost ?? (req.values('host')[0] as string), req.raw.secure)
        : endpoint.origins.matches(origin);
  if (!originAllowed) {
    return reject(403, 'Origin not allowed', 'The Origin of this request is not allowed here.', endpoint);
  }

  // Authentication.
  const policy = endpoint.auth;
  let principal: Principal | null = null;
  let awaitFirstMessageAuth = false;
  const offered = policy.mode === 'none' ? offeredRaw : withoutCredentialItems(offeredRaw, policy);
  if (policy.mode !== 'none') {
    const credential = extractCredential(req, policy, offeredRaw);
    if (credential !== null) {
      if (credential.token === null) return unauthorized(endpoint, 'The credential is malformed.');
      try {
        principal = await ctx.hooks.verifyToken(credential.token, credential.carrier);
      } catch (err) {
        if (err instanceof CredentialUnavailableError) {
          const retry = { 'Retry-After': String(ctx.limits.retryAfterSec) };
          const detail = `The token cannot be checked now: ${err.message}.`;
          return reject(503, 'Service unavailable', detail, endpoint, retry);
        }
        const why = err instanceof CredentialError ? err.message : 'verification failed';
        return unauthorized(endpoint, `The token was not accepted: ${why}.`);
      }
      const refusal = ctx.hooks.authorize?.(principal, endpoint) ?? null;
      if (refusal !== null) return reject(403, refusal.title, refusal.detail, endpoint);
    }
  }

  // A verified client certificate, where the endpoint reads it and no token named someone first.
  if (principal === null && policy.carriers.has('certificate') && req.raw.clientCertificate !== undefined) {
    const certificate = req.raw.clientCertificate;
    if (!certificate.authorized) {
      return unauthorized(endpoint, `The client certificate was not accepted: ${certificate.error}.`);
    }
    const subject = certificateSubjectOf(certificate, policy.certificateSubject);
    if (subject === null) {
      return unauthorized(endpoint, `The client certificate names no ${policy.certificateSubject} subject.`);
    }
    const { commonName, organization, subjectAltNames } = certificate;
    principal = {
      subject,
      claims: { certificate: { commonName, organization, subjectAltNames } },
      carrier: 'certificate',
    };
  }

  // The application's guards: they see the principal so far, may refuse, or may set the principal.
  // A credential in the first message brings a principal they have not seen: they run again for it.
  const guard = ctx.hooks.guard?.bind(ctx.hooks);
  let guardAgain: Accept['guardAgain'] = null;
  if (guard !== undefined) {
    const verdict = await guard({ endpoint, params, principal, request: req });
    if ('status' in verdict) return refusedBy(verdict, endpoint);
    principal = verdict.principal;
    // Even on a `none` endpoint a module's first message may carry a credential that names someone.
    if (verdict.guarded !== false)
      guardAgain = (later) => guard({ endpoint, params, principal: later, request: req });
  }

  // A later credential (the generic auth message, or a module's own: MQTT CONNECT, connection_init)
  // counts only where the endpoint lists the first-message carrier.
  const mustAuthenticateLater = principal === null && policy.mode === 'required';
  if (mustAuthenticateLater && !policy.carriers.has('first-message')) {
    return unauthorized(endpoint, 'A credential is required.');
  }

  // Subprotocol.
  const protocol =
    endpoint.subprotocolOrder === 'server'
      ? endpoint.subprotocols.find((p) => offered.includes(p))
      : offered.find((p) => endpoint.subprotocols.includes(p));
  const moduleName = protocol ?? endpoint.defaultModule;
  if (moduleName === undefined) return unsupported(endpoint);
  const module = ctx.modules.get(moduleName);
  if (module === undefined) throw new Error(`endpoint ${endpoint.path} names unknown module ${moduleName}`);
  if (protocol === undefined && module.onUnsupported === 'reject') return unsupported(endpoint);

  if (mustAuthenticateLater) awaitFirstMessageAuth = !module.ownFirstMessageAuth;

  // The module's own check (for example: is this charge point known?).
  if (ctx.hooks.checkModule) {
    const problem = await ctx.hooks.checkModule(moduleName, { endpoint, params, principal, request: req });
    if (problem !== null) return refusedBy(problem, endpoint);
  }

  // Extensions: declined, never failed (RFC 7692 section 7).
  const deflate = negotiateDeflate(
    req.values('sec-websocket-extensions'),
    endpoint.deflate ?? module.deflate,
  );

  return {
    kind: 'accept',
    endpoint,
    module: moduleName,
    protocol: protocol ?? null,
    deflate,
    principal,
    awaitFirstMessageAuth,
    guardAgain,
    params,
    release,
  };
}

/** The response framing is the gateway's: a module adds headers (WWW-Authenticate), never replaces those. */
const FRAMING_HEADERS =
  /^(connection|content-type|content-length|transfer-encoding|upgrade|sec-websocket-.*)$/i;

/** A module's or a guard's refusal: only an error status may refuse (a 200 or 101 must not fake a success). */
function refusedBy(problem: ModuleRefusal, endpoint: EndpointSpec): Reject {
  const status = problem.status >= 400 && problem.status <= 599 ? problem.status : 500;
  const headers = Object.fromEntries(
    Object.entries(problem.headers ?? {}).filter(([name]) => !FRAMING_HEADERS.test(name)),
  );
  return reject(status, problem.title, problem.detail, endpoint, headers);
}

/** Thrown by an endpoint's match when a path parameter holds a percent-escape that does not decode. */
export class PathDecodeError extends Error {
  override readonly name = 'PathDecodeError';
}

function findEndpoint(
  endpoints: readonly EndpointSpec[],
  pathname: string,
):
  | { spec: EndpointSpec; params: Readonly<Record<string, string>> }
  | { spec: EndpointSpec; malformed: string }
  | null {
  for (const spec of endpoints) {
    try {
      const params = spec.match(pathname);
      if (params !== null) return { spec, params };
    } catch (err) {
      if (err instanceof PathDecodeError) return { spec, malformed: err.message };
      throw err;
    }
  }
  return null;
}

function acceptsHtml(req: ParsedRequest): boolean {
  return req.values('accept').some((v) => v.includes('text/html'));
}

/** The principal's subject from a certificate: its one Common Name, or its first SAN of the kind. */
function certificateSubjectOf(certificate: ClientCertificate, kind: CertificateSubject): string | null {
  if (kind === 'cn') return certificate.commonName;
  const prefix = { dns: 'DNS:', uri: 'URI:', email: 'email:' }[kind];
  const name = certificate.subjectAltNames.find((san) => san.startsWith(prefix));
  return name === undefined || name.length === prefix.length ? null : name.slice(prefix.length);
}

function unauthorized(endpoint: EndpointSpec, detail: string) {
  return reject(401, 'Unauthorized', detail, endpoint, {
    'WWW-Authenticate': `Bearer realm="${endpoint.path}"`,
  });
}

function unsupported(endpoint: EndpointSpec) {
  return reject(
    400,
    'No supported subprotocol',
    `This endpoint speaks: ${endpoint.subprotocols.join(', ')}. Offer one in Sec-WebSocket-Protocol.`,
    endpoint,
  );
}

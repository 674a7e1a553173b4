import { type DeflateAgreement, type DeflateOptions } from './negotiate-deflate.js';
import { type OriginMatcher } from './match-origin.js';

/** The raw request, as plain data: what the adapter copies off Node's IncomingMessage. */
export interface HandshakeRequest {
  readonly method: string;
  readonly httpVersion: string;
  /** Path and query exactly as received on the request line. */
  readonly url: string;
  /** Node's rawHeaders: name, value, name, value, ... (names keep their case, repeats kept). */
  readonly rawHeaders: readonly string[];
  /** The client's address: the peer's, or what a trusted proxy reported. */
  readonly remoteAddress: string;
  /** TLS, to the broker or (as a trusted proxy reported) to the proxy. */
  readonly secure: boolean;
  /** The Host the client addressed, as a trusted proxy reported it (X-Forwarded-Host, Forwarded host=). */
  readonly forwardedHost?: string | undefined;
  /**
   * HTTP/2 only (httpVersion '2.0'): the `:protocol` pseudo-header of an extended CONNECT (RFC 8441),
   * with `:authority` given as the Host header.
   */
  readonly protocol?: string | undefined;
  /**
   * The certificate the client presented in its TLS handshake with the broker itself (tls.caFile
   * set); never one a proxy reported. Absent when none was presented.
   */
  readonly clientCertificate?: ClientCertificate | undefined;
}

/** A TLS client certificate as the handshake's checks need it: who it names, and whether it verified. */
export interface ClientCertificate {
  /** Its chain verified against tls.caFile and it is within its validity period. */
  readonly authorized: boolean;
  /** Why not, as OpenSSL says it (CERT_HAS_EXPIRED, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ...). */
  readonly error: string | null;
  /** The subject's one Common Name; null when it has none or several. */
  readonly commonName: string | null;
  /** The subject's one Organization (O); null when it has none or several. */
  readonly organization: string | null;
  /** Its subject alternative names as OpenSSL writes them: `DNS:device-7.example`, `URI:spiffe://...`. */
  readonly subjectAltNames: readonly string[];
}

export type CredentialCarrier =
  'query' | 'cookie' | 'header' | 'subprotocol' | 'first-message' | 'certificate';

/** What of a verified client certificate names its principal: its Common Name, or one kind of its SANs. */
export type CertificateSubject = 'cn' | 'dns' | 'uri' | 'email';

export interface AuthPolicy {
  readonly mode: 'none' | 'optional' | 'required';
  readonly carriers: ReadonlySet<CredentialCarrier>;
  readonly queryParam: string;
  readonly cookieName: string;
  readonly subprotocolPrefix: string;
  /** With the `certificate` carrier: what of the certificate is the principal's subject. */
  readonly certificateSubject: CertificateSubject;
}

/** A route the handshake can land on, compiled from configuration. */
export interface EndpointSpec {
  readonly path: string;
  readonly match: (pathname: string) => Readonly<Record<string, string>> | null;
  /** Subprotocol names the endpoint hosts, in the endpoint's order. */
  readonly subprotocols: readonly string[];
  /**
   * Whose preference picks among several offered subprotocols the endpoint hosts: the client's
   * order, or the endpoint's (so a client offering a legacy protocol first still gets the current one).
   */
  readonly subprotocolOrder: 'client' | 'server';
  readonly defaultModule: string | undefined;
  /** null: no allowlist configured, so only same-origin pages (Origin host equals Host) may connect. */
  readonly origins: OriginMatcher | null;
  readonly requireOrigin: boolean;
  readonly auth: AuthPolicy;
  readonly maxConnections: number | undefined;
  /** permessage-deflate for every module here, in place of the module's own; undefined: the module's. */
  readonly deflate?: DeflateOptions | false | undefined;
}

/** What a subprotocol module declares about the handshake. */
export interface ModuleSpec {
  readonly name: string;
  readonly onUnsupported: 'reject' | 'omit';
  readonly deflate: DeflateOptions | false;
  /** The module reads the credential from its own first message (MQTT CONNECT, GraphQL connection_init). */
  readonly ownFirstMessageAuth: boolean;
}

/** Where a principal came from: a credential's carrier, or an application's handshake guard. */
export type PrincipalSource = CredentialCarrier | 'guard';

export interface Principal {
  readonly subject: string;
  readonly claims: Readonly<Record<string, unknown>>;
  readonly carrier: PrincipalSource;
}

export interface Problem {
  readonly title: string;
  readonly detail: string;
}

export interface Reject {
  readonly kind: 'reject';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly problem: Problem;
  readonly endpoint: EndpointSpec | null;
}

export interface Accept {
  readonly kind: 'accept';
  readonly endpoint: EndpointSpec;
  readonly module: string;
  /** The Sec-WebSocket-Protocol value to answer, or null to omit the header. */
  readonly protocol: string | null;
  readonly deflate: DeflateAgreement | null;
  readonly principal: Principal | null;
  /** The gateway must hold the connection until a first-message credential verifies. */
  readonly awaitFirstMessageAuth: boolean;
  /**
   * The endpoint's handshake guards again, for the principal a first-message credential brings (MQTT
   * CONNECT, connection_init, the auth message): null where no guard names the endpoint.
   */
  readonly guardAgain: ((principal: Principal) => Promise<GuardVerdict>) | null;
  readonly params: Readonly<Record<string, string>>;
  /** Frees the connection slot held since the limit check; the gateway calls it once the connection is counted. */
  readonly release: () => void;
}

/** A GET on an endpoint path without any upgrade header: most often a proxy stripped them. */
export interface PlainRequest {
  readonly kind: 'plain';
  readonly endpoint: EndpointSpec;
  readonly acceptsHtml: boolean;
}

/** Not a WebSocket matter at all: the HTTP application answers it. */
export interface PassThrough {
  readonly kind: 'pass';
}

export type HandshakeDecision = Reject | Accept | PlainRequest | PassThrough;

/** Live counts the limit check reads; the gateway keeps them. */
export interface ConnectionCounts {
  readonly draining: boolean;
  /** Why the node cannot serve new connections now (a service they need is down), or null. */
  readonly unavailable: string | null;
  total(): number;
  forEndpoint(endpoint: EndpointSpec): number;
  forAddress(address: string): number;
  /** Holds a slot for a handshake in progress; the returned function frees it (once). */
  reserve(endpoint: EndpointSpec, address: string): () => void;
  /** Counts a handshake from `address` against its rate: 0 when it may go on, else the seconds to wait. */
  takeHandshake(address: string): number;
}

export interface HandshakeLimits {
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  readonly retryAfterSec: number;
}

export class CredentialError extends Error {
  override readonly name = 'CredentialError';
}

/** A credential that cannot be checked now (its identity provider does not answer): 503, try again later. */
export class CredentialUnavailableError extends Error {
  override readonly name = 'CredentialUnavailableError';
}

/** The I/O the core needs, passed in so that the core stays pure. */
export interface HandshakeHooks {
  /** Verifies a token; rejects with CredentialError (or any error) when it is not acceptable. */
  verifyToken(token: string, carrier: CredentialCarrier): Promise<Principal>;
  /** May this authenticated principal open this endpoint? A problem refuses with 403. */
  authorize?(principal: Principal, endpoint: EndpointSpec): Problem | null;
  /**
   * The application's handshake guards for this endpoint, after the credential was read: a refusal, or
   * the principal from here on (a guard may authenticate the connection itself, from a session cookie).
   */
  guard?(context: ModuleCheckContext): Promise<GuardVerdict>;
  /** A module's own handshake check (OCPP: unknown charge point -> 404). */
  checkModule?(module: string, context: ModuleCheckContext): Promise<ModuleRefusal | null>;
}

/** What the application's handshake guards decided: a refusal, or the principal from here on. */
export type GuardVerdict =
  | ModuleRefusal
  /** `guarded`: false when no guard names the endpoint (nothing to run again for a later principal). */
  | { readonly principal: Principal | null; readonly guarded?: boolean };

/** A module check's refusal; `headers` carries what its status needs (401: WWW-Authenticate). */
export interface ModuleRefusal extends Problem {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ModuleCheckContext {
  readonly endpoint: EndpointSpec;
  readonly params: Readonly<Record<string, string>>;
  readonly principal: Principal | null;
  readonly request: ParsedRequest;
}

/** Header lookups over rawHeaders, built once per request. */
export interface ParsedRequest {
  readonly raw: HandshakeRequest;
  readonly pathname: string;
  readonly query: string;
  /** Every value of a header, in order; names are lower-case. */
  values(name: string): readonly string[];
}

export interface HandshakeContext {
  readonly endpoints: readonly EndpointSpec[];
  readonly modules: ReadonlyMap<string, ModuleSpec>;
  readonly limits: HandshakeLimits;
  readonly counts: ConnectionCounts;
  readonly hooks: HandshakeHooks;
}

import { type IncomingMessage } from 'node:http';
import { type IncomingHttpHeaders as Http2Headers, type ServerHttp2Stream } from 'node:http2';
import { type Accept, type HandshakeDecision, type HandshakeRequest, type Reject } from '#broker/handshake';
import { clientCertificateOf } from '../http-front/client-certificate.js';
import { clip, type DecisionFields } from '../observability/decision-log.js';
import { type ClientOrigin } from '../http-front/forwarded.js';
import { extendedConnectRequest } from '../http-front/http2-front.js';
import { redactSubprotocols, redactUrl } from '../observability/redact.js';

/** One handshake attempt, as read off the request before anything rewrites it. */
export interface Attempt {
  readonly started: number;
  readonly request: HandshakeRequest;
  /** The client's Sec-WebSocket-Protocol, as sent (Node joins repeated lines with ", "). */
  readonly offered: string | undefined;
}

/** Reads what the decision and the log line need off an HTTP/1.1 request, once (remoteAddress is a syscall). */
export function attemptOf(req: IncomingMessage, client: ClientOrigin): Attempt {
  return {
    started: performance.now(),
    offered: req.headers['sec-websocket-protocol'],
    request: {
      method: req.method ?? '',
      httpVersion: req.httpVersion,
      url: req.url ?? '/',
      rawHeaders: req.rawHeaders,
      remoteAddress: client.address,
      secure: client.secure,
      forwardedHost: client.host,
      clientCertificate: clientCertificateOf(req.socket),
    },
  };
}

/** The same for an HTTP/2 extended CONNECT (RFC 8441). */
export function extendedConnectAttempt(
  stream: ServerHttp2Stream,
  headers: Http2Headers,
  client: ClientOrigin,
): Attempt {
  const offered = headers['sec-websocket-protocol'];
  return {
    started: performance.now(),
    offered: Array.isArray(offered) ? offered.join(', ') : offered,
    request: extendedConnectRequest(headers, client, clientCertificateOf(stream.session?.socket)),
  };
}

/**
 * The decision log's line for an attempt: the client's own text clipped and redacted. Built as one
 * literal, every field in the same order: spreading the outcome in made V8 build each line's object
 * another way, which cost every handshake measurably (BENCHMARKS.md, Handshake rate).
 */
export function decisionFields(
  attempt: Attempt,
  outcome: Pick<DecisionFields, 'status' | 'endpoint' | 'subprotocol' | 'reason'>,
  credentialPrefixes: readonly string[],
): DecisionFields {
  return {
    status: outcome.status,
    endpoint: outcome.endpoint,
    subprotocol: outcome.subprotocol,
    reason: outcome.reason,
    path: clip(redactUrl(attempt.request.url)),
    offered: attempt.offered && clip(redactSubprotocols([attempt.offered], credentialPrefixes)),
    client: attempt.request.remoteAddress,
    durationMs: Math.round((performance.now() - attempt.started) * 1000) / 1000,
  };
}

/** A decision to act on: one that could not be made (or makes no sense for an upgrade) is a 500. */
export function acceptOrReject(decision: HandshakeDecision | null): Accept | Reject {
  if (decision !== null && (decision.kind === 'accept' || decision.kind === 'reject')) return decision;
  return {
    kind: 'reject',
    status: 500,
    headers: {},
    endpoint: null,
    problem: { title: 'Internal error', detail: 'The handshake could not be decided.' },
  };
}

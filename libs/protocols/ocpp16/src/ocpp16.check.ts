import { type HandshakeCheckContext, type HandshakeCheckFailure } from '#broker/gateway';
import { type ClientCertificate } from '#broker/handshake';
import { type ChargePointsRepository } from './store/charge-points.repository.js';
import { basicPassword } from './basic-auth.js';
import { type OcppSettings } from './ocpp-settings.js';

/**
 * What the admin API accepts as an identity (48 characters: OCPP's chargeBoxIdentity), nothing else:
 * no space, control or format character (zero-width, bidi overrides, BOM: an identity must look
 * like what it is), no '/', and not '.' or '..' (which a path or a log would read as something else).
 */
const IDENTITY = /^(?!\.{1,2}$)[^\p{Cc}\p{Cf}\s/]{1,48}$/u;

/**
 * The charge point identity: the endpoint's `chargePointId` parameter, else its last one (the last
 * path segment), already percent-decoded by the path match. Null when it is not a valid identity.
 */
export function identityOf(params: Readonly<Record<string, string>>): string | null {
  const value = params['chargePointId'] ?? Object.values(params).at(-1);
  return value !== undefined && IDENTITY.test(value) ? value : null;
}

function refuse(status: number, title: string, detail: string, headers?: Record<string, string>) {
  return { status, title, detail, ...(headers ? { headers } : {}) };
}

/**
 * The OCPP connection rules before the 101 (OCPP-J 1.6 section 3, security whitepaper profiles 1
 * to 3): a well-formed identity, TLS for profile 2, the charge point known unless unknown ones are
 * allowed, and its stored key presented as HTTP Basic password. A key stored for a charge point is
 * required on profiles 0 to 2: storing one means the operator wants it checked. Profile 3 has no
 * Basic auth: a verified client certificate naming the identity stands for it.
 */
export async function checkChargePoint(
  context: HandshakeCheckContext,
  settings: OcppSettings,
  chargePoints: ChargePointsRepository,
): Promise<HandshakeCheckFailure | null> {
  const identity = identityOf(context.params);
  if (identity === null) {
    return refuse(
      400,
      'Bad charge point identity',
      'The charge point identity (the last path segment) must be 1 to 48 characters, without spaces, control or format characters (zero-width, bidi) or /, and not . or ..',
    );
  }
  if (settings.securityProfile === 2 && !context.secure) {
    return refuse(403, 'TLS required', 'Security profile 2 accepts charge points over wss:// only.');
  }
  if (settings.securityProfile === 3) {
    const problem = certificateProblem(context.clientCertificate, identity, settings.certificateOrganization);
    if (problem !== null) return problem;
  }
  const password = basicPassword(context.header('authorization'), identity);
  const result = await chargePoints.authenticate(
    identity,
    password,
    settings.securityProfile === 3
      ? { certificateVerified: true }
      : { requirePassword: settings.securityProfile > 0 },
  );
  const challenge = { 'WWW-Authenticate': `Basic realm="${context.endpoint}", charset="UTF-8"` };
  switch (result) {
    case 'ok':
      return null;
    case 'unknown':
      return settings.allowUnknownChargePoints
        ? null
        : refuse(404, 'Unknown charge point', `No charge point ${identity} is registered.`);
    case 'not-allowed':
      return refuse(403, 'Charge point not allowed', `Charge point ${identity} is not allowed to connect.`);
    case 'no-password':
      return refuse(
        401,
        'Unauthorized',
        `Security profile ${settings.securityProfile} needs a key, and none is stored for ${identity}.`,
        challenge,
      );
    case 'bad-password':
      return refuse(
        401,
        'Unauthorized',
        password === null
          ? 'HTTP Basic credentials for this charge point are required (user: its identity).'
          : 'The Basic credentials were not accepted.',
        challenge,
      );
  }
}

/** Security profile 3: a certificate that verified against tls.caFile and names this charge point. */
function certificateProblem(
  certificate: ClientCertificate | null,
  identity: string,
  organization: string | undefined,
): HandshakeCheckFailure | null {
  if (certificate === null) {
    return refuse(
      403,
      'Client certificate required',
      'Security profile 3 accepts charge points with a TLS client certificate only, presented to the broker itself.',
    );
  }
  if (!certificate.authorized) {
    return refuse(
      403,
      'Client certificate not accepted',
      `The client certificate was refused: ${why(certificate.error)} (${certificate.error ?? 'unverified'}).`,
    );
  }
  if (certificate.commonName !== identity) {
    const named = certificate.commonName === null ? 'no single name' : quote(certificate.commonName);
    return refuse(
      403,
      'Certificate of another charge point',
      `The client certificate names ${named}, not ${identity}: its Common Name must be the identity.`,
    );
  }
  if (organization !== undefined && certificate.organization !== organization) {
    const named =
      certificate.organization === null ? 'no single organization' : quote(certificate.organization);
    return refuse(
      403,
      'Certificate of another operator',
      `The client certificate's Organization is ${named}, not ${quote(organization)}.`,
    );
  }
  return null;
}

/** OpenSSL's verification codes a charge point's installer meets, in words. */
function why(code: string | null): string {
  switch (code) {
    case 'CERT_HAS_EXPIRED':
      return 'it has expired';
    case 'CERT_NOT_YET_VALID':
      return 'it is not valid yet';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return 'its issuer is not trusted (tls.caFile)';
    default:
      return 'it did not verify';
  }
}

/**
 * A subject field as a refusal quotes it: at most 64 characters (X.509's upper bound), JSON-quoted,
 * and control or format characters (bidi overrides, zero-width) as \\u escapes.
 */
function quote(name: string): string {
  const clipped = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
  return clipped.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

import { type HandshakeCheckContext, type HandshakeCheckFailure } from '#broker/gateway';
import { type ChargePointsRepository } from '#broker/store';
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
 * and 2): a well-formed identity, TLS for profile 2, the charge point known unless unknown ones are
 * allowed, and its stored key presented as HTTP Basic password. A key stored for a charge point is
 * always required, whatever the profile: storing one means the operator wants it checked.
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
  const password = basicPassword(context.header('authorization'), identity);
  const result = await chargePoints.authenticate(identity, password, {
    requirePassword: settings.securityProfile > 0,
  });
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

/** The CALLERROR codes of OCPP-J 1.6 (section 4.2.3), spelled as that table spells them. */
export const ERROR_CODES = [
  'NotImplemented',
  'NotSupported',
  'InternalError',
  'ProtocolError',
  'SecurityError',
  'FormationViolation',
  'PropertyConstraintViolation',
  'OccurenceConstraintViolation',
  'TypeConstraintViolation',
  'GenericError',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** An error that leaves as a CALLERROR: its description and details are for the peer, so they must not leak internals. */
export class OcppError extends Error {
  override readonly name = 'OcppError';

  constructor(
    readonly code: ErrorCode,
    description: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(description);
  }
}

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

/** Why a message was refused or dropped: the label of the bad-message counter. */
export type BadMessageReason =
  | 'invalid-json'
  | 'not-a-frame'
  | 'bad-message-id'
  | 'unknown-type'
  | 'unknown-action'
  | 'unsupported-action'
  | 'not-accepted'
  | 'invalid-payload'
  | 'duplicate-id'
  | 'busy'
  | 'unknown-response-id'
  | 'invalid-response';

/** A CALLERROR the charge point answered one of our CALLs with. */
export class CallErrorResponse extends Error {
  override readonly name = 'CallErrorResponse';

  constructor(
    readonly code: string,
    readonly description: string,
    readonly details: unknown,
  ) {
    super(`${code}: ${description}`);
  }
}

/** The charge point answered one of our CALLs with a CALLRESULT that fails the action's schema. */
export class InvalidResponseError extends Error {
  override readonly name = 'InvalidResponseError';

  constructor(readonly error: OcppError) {
    super(error.message);
  }
}

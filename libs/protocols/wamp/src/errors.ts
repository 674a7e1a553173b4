/** Error and close URIs the router sends. `broker.error.*` are ours: `wamp.` is reserved for the spec. */
export const E = {
  protocolViolation: 'wamp.error.protocol_violation',
  noSuchRealm: 'wamp.error.no_such_realm',
  noAuthMethod: 'wamp.error.no_auth_method',
  authenticationFailed: 'wamp.error.authentication_failed',
  notAuthorized: 'wamp.error.not_authorized',
  invalidUri: 'wamp.error.invalid_uri',
  invalidArgument: 'wamp.error.invalid_argument',
  noSuchProcedure: 'wamp.error.no_such_procedure',
  procedureAlreadyExists: 'wamp.error.procedure_already_exists',
  noSuchRegistration: 'wamp.error.no_such_registration',
  noSuchSubscription: 'wamp.error.no_such_subscription',
  noSuchSession: 'wamp.error.no_such_session',
  canceled: 'wamp.error.canceled',
  timeout: 'wamp.error.timeout',
  limitExceeded: 'broker.error.limit_exceeded',
  goodbyeAndOut: 'wamp.close.goodbye_and_out',
  systemShutdown: 'wamp.close.system_shutdown',
} as const;

/** Thrown by the broker and dealer when a client breaks the protocol; the session answers ABORT and ends. */
export class ProtocolViolation extends Error {
  override readonly name = 'ProtocolViolation';
}

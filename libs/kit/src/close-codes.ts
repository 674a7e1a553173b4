/**
 * The WebSocket close codes of RFC 6455 (section 7.4.1) the broker and its modules send, by meaning.
 * A protocol's own codes (4xxx: graphql-ws's 4400 to 4500, OCPP's 4000 for a replaced connection)
 * stay with the protocol.
 */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  unsupportedData: 1003,
  policyViolation: 1008,
  tooBig: 1009,
  internalError: 1011,
} as const;

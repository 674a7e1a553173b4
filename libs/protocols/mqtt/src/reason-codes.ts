/** MQTT 5 reason codes (section 2.4) the broker sends, by name. */
export const RC = {
  success: 0x00,
  noMatchingSubscribers: 0x10,
  noSubscriptionExisted: 0x11,
  malformed: 0x81,
  protocolError: 0x82,
  unsupportedProtocolVersion: 0x84,
  clientIdNotValid: 0x85,
  badUserNameOrPassword: 0x86,
  notAuthorized: 0x87,
  serverUnavailable: 0x88,
  serverBusy: 0x89,
  serverShuttingDown: 0x8b,
  badAuthenticationMethod: 0x8c,
  keepAliveTimeout: 0x8d,
  sessionTakenOver: 0x8e,
  administrativeAction: 0x98,
  useAnotherServer: 0x9c,
  topicFilterInvalid: 0x8f,
  topicNameInvalid: 0x90,
  packetIdNotFound: 0x92,
  receiveMaximumExceeded: 0x93,
  topicAliasInvalid: 0x94,
  packetTooLarge: 0x95,
  quotaExceeded: 0x97,
  payloadFormatInvalid: 0x99,
} as const;

/** MQTT 3.1/3.1.1 CONNACK return codes (section 3.2.2.3). */
export const V3_CONNACK = {
  accepted: 0,
  unacceptableProtocolVersion: 1,
  identifierRejected: 2,
  serverUnavailable: 3,
  badUserNameOrPassword: 4,
  notAuthorized: 5,
} as const;

/** The v3 CONNACK code closest to a v5 CONNACK reason code. */
export function v3ConnackCode(reasonCode: number): number {
  switch (reasonCode) {
    case RC.success:
      return V3_CONNACK.accepted;
    case RC.unsupportedProtocolVersion:
      return V3_CONNACK.unacceptableProtocolVersion;
    case RC.clientIdNotValid:
      return V3_CONNACK.identifierRejected;
    case RC.badUserNameOrPassword:
      return V3_CONNACK.badUserNameOrPassword;
    case RC.notAuthorized:
      return V3_CONNACK.notAuthorized;
    default:
      return V3_CONNACK.serverUnavailable;
  }
}

/** A protocol violation that ends the connection: v5 clients get DISCONNECT with this code first. */
export class MqttProtocolError extends Error {
  constructor(
    readonly reasonCode: number,
    message: string,
  ) {
    super(message);
  }
}

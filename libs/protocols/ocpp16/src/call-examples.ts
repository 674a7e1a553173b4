import { type PanelCallAction } from '#broker/gateway';

/** A placeholder where a real certificate's PEM goes (the schemas only bound its length). */
const PEM = '-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----';
const HASH = {
  hashAlgorithm: 'SHA256',
  issuerNameHash: '0'.repeat(64),
  issuerKeyHash: '0'.repeat(64),
  serialNumber: '1',
};

/**
 * A minimal valid payload for each action a central system sends (CENTRAL_SYSTEM_ACTIONS, in its
 * order), which the dashboard's call form starts from. The spec checks each against its schema.
 */
export const CALL_EXAMPLES: readonly PanelCallAction[] = [
  { id: 'CancelReservation', example: { reservationId: 1 } },
  { id: 'CertificateSigned', example: { certificateChain: PEM } },
  { id: 'ChangeAvailability', example: { connectorId: 0, type: 'Operative' } },
  { id: 'ChangeConfiguration', example: { key: 'HeartbeatInterval', value: '300' } },
  { id: 'ClearCache', example: {} },
  { id: 'ClearChargingProfile', example: {} },
  { id: 'DataTransfer', example: { vendorId: 'com.example', messageId: 'ping' } },
  { id: 'DeleteCertificate', example: { certificateHashData: HASH } },
  { id: 'ExtendedTriggerMessage', example: { requestedMessage: 'Heartbeat' } },
  { id: 'GetCompositeSchedule', example: { connectorId: 1, duration: 3600 } },
  { id: 'GetConfiguration', example: {} },
  { id: 'GetDiagnostics', example: { location: 'ftp://diagnostics.example.com/' } },
  { id: 'GetInstalledCertificateIds', example: { certificateType: 'CentralSystemRootCertificate' } },
  { id: 'GetLocalListVersion', example: {} },
  {
    id: 'GetLog',
    example: { logType: 'DiagnosticsLog', requestId: 1, log: { remoteLocation: 'ftp://logs.example.com/' } },
  },
  {
    id: 'InstallCertificate',
    example: { certificateType: 'CentralSystemRootCertificate', certificate: PEM },
  },
  { id: 'RemoteStartTransaction', example: { connectorId: 1, idTag: 'TAG-1' } },
  { id: 'RemoteStopTransaction', example: { transactionId: 1 } },
  {
    id: 'ReserveNow',
    example: { connectorId: 1, expiryDate: '2030-01-01T00:00:00Z', idTag: 'TAG-1', reservationId: 1 },
  },
  { id: 'Reset', example: { type: 'Soft' } },
  { id: 'SendLocalList', example: { listVersion: 1, updateType: 'Full', localAuthorizationList: [] } },
  {
    id: 'SetChargingProfile',
    example: {
      connectorId: 1,
      csChargingProfiles: {
        chargingProfileId: 1,
        stackLevel: 0,
        chargingProfilePurpose: 'TxDefaultProfile',
        chargingProfileKind: 'Relative',
        chargingSchedule: {
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }],
        },
      },
    },
  },
  {
    id: 'SignedUpdateFirmware',
    example: {
      requestId: 1,
      firmware: {
        location: 'https://firmware.example.com/1.0.bin',
        retrieveDateTime: '2030-01-01T00:00:00Z',
        signingCertificate: PEM,
        signature: 'c2lnbmF0dXJl',
      },
    },
  },
  { id: 'TriggerMessage', example: { requestedMessage: 'Heartbeat' } },
  { id: 'UnlockConnector', example: { connectorId: 1 } },
  {
    id: 'UpdateFirmware',
    example: { location: 'https://firmware.example.com/1.0.bin', retrieveDate: '2030-01-01T00:00:00Z' },
  },
];

/** A charge point the central system knows; its password is write-only (only whether it has one). */
export interface ChargePointView {
  readonly identity: string;
  readonly allowed: boolean;
  readonly hasPassword: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What the central system knows about a charge point from its BootNotification and Heartbeats. */
export interface StationView {
  readonly identity: string;
  readonly vendor: string | null;
  readonly model: string | null;
  readonly serialNumber: string | null;
  readonly firmwareVersion: string | null;
  readonly bootStatus: string | null;
  readonly lastBootAt: string | null;
  readonly lastHeartbeatAt: string | null;
  readonly updatedAt: string;
}

export type IdTagStatus = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid';

export interface IdTagView {
  readonly idTag: string;
  readonly status: IdTagStatus;
  readonly parentIdTag: string | null;
  readonly expiryDate: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The idTagInfo an Authorize, StartTransaction or StopTransaction answer carries. */
export interface IdTagInfo {
  readonly status: IdTagStatus | 'ConcurrentTx';
  readonly parentIdTag?: string;
  readonly expiryDate?: string;
}

export interface ConnectorView {
  readonly identity: string;
  readonly connectorId: number;
  readonly status: string;
  readonly errorCode: string;
  readonly info: string | null;
  readonly vendorId: string | null;
  readonly vendorErrorCode: string | null;
  readonly statusAt: string;
  readonly updatedAt: string;
}

export interface TransactionView {
  readonly id: number;
  readonly identity: string;
  readonly connectorId: number;
  readonly idTag: string;
  readonly startStatus: string;
  readonly meterStart: number;
  readonly startedAt: string;
  readonly reservationId: number | null;
  readonly meterStop: number | null;
  readonly stoppedAt: string | null;
  readonly stopReason: string | null;
  readonly stopIdTag: string | null;
}

/** One sampled value as the OCPP SampledValue carries it; only `value` is required. */
export interface SampledValueInput {
  readonly value: string;
  readonly measurand?: string | undefined;
  readonly unit?: string | undefined;
  readonly phase?: string | undefined;
  readonly context?: string | undefined;
  readonly location?: string | undefined;
  readonly format?: string | undefined;
}

export interface MeterValueInput {
  readonly timestamp: string;
  readonly sampledValue: readonly SampledValueInput[];
}

export interface MeterValueView extends SampledValueInput {
  readonly id: string;
  readonly identity: string;
  readonly connectorId: number;
  readonly transactionId: number | null;
  readonly sampledAt: string;
}

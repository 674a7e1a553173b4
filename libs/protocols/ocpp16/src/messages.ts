import { type MeterValueInput } from './store/ocpp.types.js';

// The request payloads the Core handlers read, as the 1.6 schemas define them. A payload reaches a
// handler only after it passed its schema, so these shapes hold.

export interface BootNotificationReq {
  readonly chargePointVendor: string;
  readonly chargePointModel: string;
  readonly chargePointSerialNumber?: string;
  readonly chargeBoxSerialNumber?: string;
  readonly firmwareVersion?: string;
}

export interface StatusNotificationReq {
  readonly connectorId: number;
  readonly errorCode: string;
  readonly status: string;
  readonly info?: string;
  readonly timestamp?: string;
  readonly vendorId?: string;
  readonly vendorErrorCode?: string;
}

export interface AuthorizeReq {
  readonly idTag: string;
}

export interface StartTransactionReq {
  readonly connectorId: number;
  readonly idTag: string;
  readonly meterStart: number;
  readonly timestamp: string;
  readonly reservationId?: number;
}

export interface StopTransactionReq {
  readonly transactionId: number;
  readonly meterStop: number;
  readonly timestamp: string;
  readonly idTag?: string;
  readonly reason?: string;
  readonly transactionData?: readonly MeterValueInput[];
}

export interface MeterValuesReq {
  readonly connectorId: number;
  readonly transactionId?: number;
  readonly meterValue: readonly MeterValueInput[];
}

export interface DataTransferReq {
  readonly vendorId: string;
  readonly messageId?: string;
  readonly data?: string;
}

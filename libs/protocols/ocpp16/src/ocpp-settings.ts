import { type OcppConfig } from './ocpp-config.js';

/** The ocpp section with an endpoint's overrides applied: what one connection runs under. */
export interface OcppSettings {
  readonly allowUnknownChargePoints: boolean;
  readonly securityProfile: 0 | 1 | 2 | 3;
  /** Profile 3: the Organization (O) a charge point's certificate must name, when set. */
  readonly certificateOrganization: string | undefined;
  readonly bootPolicy: OcppConfig['bootPolicy'];
  readonly heartbeatIntervalSec: number;
  readonly bootRetryIntervalSec: number;
  readonly callTimeoutMs: number;
  readonly maxQueuedCalls: number;
}

export function settingsFor(config: OcppConfig, endpointPath: string): OcppSettings {
  const override = config.endpoints.find((e) => e.path === endpointPath);
  return {
    allowUnknownChargePoints: override?.allowUnknownChargePoints ?? config.allowUnknownChargePoints,
    securityProfile: override?.securityProfile ?? config.securityProfile,
    certificateOrganization: override?.certificateOrganization ?? config.certificateOrganization,
    bootPolicy: config.bootPolicy,
    heartbeatIntervalSec: config.heartbeatIntervalSec,
    bootRetryIntervalSec: config.bootRetryIntervalSec,
    callTimeoutMs: config.callTimeoutMs,
    maxQueuedCalls: config.maxQueuedCalls,
  };
}

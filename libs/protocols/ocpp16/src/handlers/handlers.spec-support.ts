import { BrokerStore } from '#broker/store';
import { type OcppSettings } from '../ocpp-settings.js';
import { OcppRepositories } from '../store/ocpp.repositories.js';
import { type HandlerContext } from './handler.types.js';

export const SETTINGS: OcppSettings = {
  allowUnknownChargePoints: true,
  securityProfile: 0,
  certificateOrganization: undefined,
  bootPolicy: 'accept',
  heartbeatIntervalSec: 300,
  bootRetryIntervalSec: 60,
  callTimeoutMs: 30_000,
  maxQueuedCalls: 16,
};

/** A handler context over a real store in memory: handlers are tested against what they persist. */
export function handlerContext(
  store: MemoryStore,
  identity: string,
  overrides: Partial<HandlerContext> = {},
): HandlerContext {
  return {
    identity,
    store: store.ocpp,
    settings: SETTINGS,
    isKnown: async () => false,
    accepted: true,
    now: () => new Date('2026-06-01T12:00:00.000Z'),
    charge: () => undefined,
    ...overrides,
  };
}

/** The OCPP repositories over a store in memory; close() closes the store. */
export interface MemoryStore {
  readonly ocpp: OcppRepositories;
  close(): Promise<void>;
}

export async function memoryStore(): Promise<MemoryStore> {
  const store = await BrokerStore.open({ sqlitePath: ':memory:' });
  return { ocpp: await OcppRepositories.open(store), close: () => store.close() };
}

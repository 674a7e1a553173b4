export const BROKER_CONFIG = Symbol('BROKER_CONFIG');
export const BROKER_LOGGER = Symbol('BROKER_LOGGER');
/** Where /health and /metrics answer (OpsPaths); BrokerModule's healthPath and metricsPath. */
export const BROKER_OPS = Symbol('BROKER_OPS');

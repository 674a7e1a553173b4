export const BROKER_CONFIG = Symbol('BROKER_CONFIG');
export const BROKER_LOGGER = Symbol('BROKER_LOGGER');

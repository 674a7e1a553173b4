import { createLogger } from '#broker/gateway';

/** A broker logger that writes nowhere, for suites that read nothing from the log. */
export const logger = createLogger('info', { write: () => undefined });

import { authorize } from './authorize.js';
import { bootNotification } from './boot-notification.js';
import { dataTransfer } from './data-transfer.js';
import { type ActionHandler } from './handler.types.js';
import { heartbeat } from './heartbeat.js';
import { meterValues } from './meter-values.js';
import { statusNotification } from './status-notification.js';
import { startTransaction, stopTransaction } from './transactions.js';

export type { ActionHandler, HandlerContext } from './handler.types.js';

/** The Core profile's charge-point-initiated actions; any other 1.6 action answers NotSupported. */
export const CORE_HANDLERS: ReadonlyMap<string, ActionHandler<never>> = new Map<string, ActionHandler<never>>(
  [
    ['BootNotification', bootNotification],
    ['Heartbeat', heartbeat],
    ['StatusNotification', statusNotification],
    ['Authorize', authorize],
    ['StartTransaction', startTransaction],
    ['StopTransaction', stopTransaction],
    ['MeterValues', meterValues],
    ['DataTransfer', dataTransfer],
  ],
);

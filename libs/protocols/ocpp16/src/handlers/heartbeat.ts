import { type ActionHandler } from './handler.types.js';

/** The last-seen time is written behind (within a second): the answer does not depend on it. */
export const heartbeat: ActionHandler<Record<string, never>> = (_req, ctx) => {
  ctx.writeBehind('heartbeat', ctx.store.stations.recordHeartbeat(ctx.identity));
  return Promise.resolve({ currentTime: ctx.now().toISOString() });
};

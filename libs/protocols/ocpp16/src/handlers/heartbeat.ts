import { type ActionHandler } from './handler.types.js';

/** The last-seen time is written behind, within a second (see OcppStationsRepository). */
export const heartbeat: ActionHandler<Record<string, never>> = async (_req, ctx) => {
  ctx.store.stations.recordHeartbeat(ctx.identity);
  return { currentTime: ctx.now().toISOString() };
};

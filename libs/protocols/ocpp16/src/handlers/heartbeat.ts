import { type ActionHandler } from './handler.types.js';

export const heartbeat: ActionHandler<Record<string, never>> = async (_req, ctx) => {
  await ctx.store.stations.recordHeartbeat(ctx.identity);
  return { currentTime: ctx.now().toISOString() };
};

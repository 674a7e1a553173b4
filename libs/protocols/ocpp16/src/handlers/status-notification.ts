import { type StatusNotificationReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

export const statusNotification: ActionHandler<StatusNotificationReq> = async (req, ctx) => {
  await ctx.store.connectors.record(ctx.identity, req);
  return {};
};

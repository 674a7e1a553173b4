import { type AuthorizeReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

/** An id tag the store does not hold is Invalid; an Accepted one past its expiry date is Expired. */
export const authorize: ActionHandler<AuthorizeReq> = async (req, ctx) => {
  return { idTagInfo: await ctx.store.idTags.authorize(req.idTag, ctx.now()) };
};

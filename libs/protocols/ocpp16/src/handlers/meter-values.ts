import { type MeterValuesReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

export const meterValues: ActionHandler<MeterValuesReq> = async (req, ctx) => {
  const stored = await ctx.store.meterValues.add(
    ctx.identity,
    req.connectorId,
    req.transactionId ?? null,
    req.meterValue,
  );
  ctx.charge(stored.loopMs);
  return {};
};

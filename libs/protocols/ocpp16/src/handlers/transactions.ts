import { type StartTransactionReq, type StopTransactionReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

/**
 * A transaction id is always issued, whatever the id tag's status (the charge point stops a
 * transaction whose idTagInfo is not Accepted); a tag already charging elsewhere is ConcurrentTx.
 * A resent start gets its transaction back with the status it was first given.
 */
export const startTransaction: ActionHandler<StartTransactionReq> = async (req, ctx) => {
  const info = await ctx.store.idTags.authorize(req.idTag, ctx.now());
  const status =
    info.status === 'Accepted' && (await ctx.store.transactions.hasOngoing(req.idTag))
      ? ('ConcurrentTx' as const)
      : info.status;
  const transaction = await ctx.store.transactions.start({
    identity: ctx.identity,
    connectorId: req.connectorId,
    idTag: req.idTag,
    startStatus: status,
    meterStart: req.meterStart,
    startedAt: req.timestamp,
    reservationId: req.reservationId,
  });
  return { transactionId: transaction.id, idTagInfo: { ...info, status: transaction.startStatus } };
};

/**
 * Always answered, even for a transaction we do not know or that already ended: the charge point
 * must be able to empty its queue of stops. transactionData is kept as meter values.
 */
export const stopTransaction: ActionHandler<StopTransactionReq> = async (req, ctx) => {
  const known = await ctx.store.transactions.get(req.transactionId);
  const ours = known !== null && known.identity === ctx.identity;
  // A stop of ours already recorded is a resend (its answer was lost): its data is kept already.
  const resent = ours && known.stoppedAt !== null;
  if (!resent && req.transactionData !== undefined && req.transactionData.length > 0) {
    const stored = await ctx.store.meterValues.add(
      ctx.identity,
      ours ? known.connectorId : 0,
      ours ? req.transactionId : null,
      req.transactionData,
    );
    ctx.charge(stored.loopMs);
  }
  await ctx.store.transactions.stop({
    identity: ctx.identity,
    id: req.transactionId,
    meterStop: req.meterStop,
    stoppedAt: req.timestamp,
    reason: req.reason,
    idTag: req.idTag,
  });
  if (req.idTag === undefined) return {};
  return { idTagInfo: await ctx.store.idTags.authorize(req.idTag, ctx.now()) };
};

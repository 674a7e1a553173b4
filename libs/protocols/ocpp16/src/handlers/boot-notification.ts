import { type BootNotificationReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

/**
 * Accepted with the heartbeat interval, or Pending / Rejected by the boot policy with the retry
 * interval. The charge point's details and the answer are kept, so a reconnect without a new boot
 * (OCPP 1.6 boots only after a reboot) is still accepted.
 */
export const bootNotification: ActionHandler<BootNotificationReq> = async (req, ctx) => {
  const policy = ctx.settings.bootPolicy;
  const status =
    policy === 'accept' || (await ctx.isKnown())
      ? 'Accepted'
      : policy === 'pending-unknown'
        ? 'Pending'
        : 'Rejected';
  await ctx.store.stations.recordBoot(
    ctx.identity,
    {
      vendor: req.chargePointVendor,
      model: req.chargePointModel,
      serialNumber: req.chargePointSerialNumber ?? req.chargeBoxSerialNumber,
      firmwareVersion: req.firmwareVersion,
    },
    status,
  );
  ctx.accepted = status === 'Accepted';
  return {
    status,
    currentTime: ctx.now().toISOString(),
    interval: status === 'Accepted' ? ctx.settings.heartbeatIntervalSec : ctx.settings.bootRetryIntervalSec,
  };
};

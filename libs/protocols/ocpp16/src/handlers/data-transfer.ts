import { type DataTransferReq } from '../messages.js';
import { type ActionHandler } from './handler.types.js';

/**
 * No vendor extensions are implemented, so the answer is UnknownVendorId, as the 1.6 specification
 * asks; the request still reaches the bus, where an application can act on it.
 */
export const dataTransfer: ActionHandler<DataTransferReq> = async (_req) => {
  return { status: 'UnknownVendorId' };
};

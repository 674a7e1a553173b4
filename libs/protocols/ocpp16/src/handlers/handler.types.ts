import { type Payload } from '../rpc-frame.js';
import { type OcppSettings } from '../ocpp-settings.js';
import { type OcppRepositories } from '../store/ocpp.repositories.js';

/** What a Core handler may read and change: one charge point, the store, the module's settings. */
export interface HandlerContext {
  readonly identity: string;
  readonly store: OcppRepositories;
  readonly settings: OcppSettings;
  /** Is the charge point registered in the store (the boot policy treats unknown ones apart)? */
  isKnown(): Promise<boolean>;
  /** Set by an Accepted BootNotification; until then every other CALL is refused with SecurityError. */
  accepted: boolean;
  now(): Date;
  /**
   * Loop time spent for this charge point's CALL after an await (its rows' share of a store write),
   * counted against its connection's input budget (Connection.charge).
   */
  charge(ms: number): void;
}

/** `Req` is the action's request shape: a payload reaches its handler only after passing the schema. */
export type ActionHandler<Req> = (payload: Req, context: HandlerContext) => Promise<Payload>;

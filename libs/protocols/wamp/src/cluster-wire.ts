import { type Args, type Dict, type Kwargs } from './messages.js';

/** Who made a call forwarded to another node, as the callee there sees them. */
export interface CallerInfo {
  readonly session: number;
  readonly authid: string;
  readonly authrole: string;
}

/** The node-addressed messages of WAMP RPC across the cluster: a call, its cancel, and its answers. */
export type Wire =
  | {
      readonly k: 'call';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly uri: string;
      readonly options: Dict;
      readonly args?: Args;
      readonly kwargs?: Kwargs;
      readonly caller: CallerInfo;
    }
  | {
      readonly k: 'cancel';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly mode: string;
    }
  | {
      readonly k: 'answer';
      readonly from: string;
      readonly realm: string;
      readonly id: number;
      readonly message: unknown[];
    };

import { type CallerInfo } from './cluster-wire.js';
import { type Dict, INTERRUPT } from './messages.js';
import { Permissions } from './permissions.js';
import { Session } from './wamp-session.js';

/** Callers on other nodes passed their own realm's permission check there; here they may call anything. */
const ANY = new Permissions([
  { uri: '', match: 'prefix', allow: ['call', 'register', 'publish', 'subscribe'] },
]);
const ADVANCED = {
  caller: { features: { call_canceling: true, progressive_call_results: true } },
  callee: { features: { call_canceling: true, progressive_call_results: true } },
};
const NOBODY = { send: () => undefined, sendEvent: () => undefined };

/** Another node, as the callee of the calls this node sends it in one realm. */
export class NodeStandIn extends Session {
  constructor(
    realm: string,
    readonly node: string,
    private readonly cancel: (id: number, mode: string) => void,
  ) {
    super(
      0,
      realm,
      { authid: node, authrole: 'node', authmethod: 'cluster', authprovider: 'cluster' },
      ANY,
      ADVANCED,
      NOBODY,
    );
  }

  /** The dealer only INTERRUPTs a stand-in (cancel, timeout, caller gone): the node cancels on its side. */
  override send(message: readonly unknown[]): void {
    if (message[0] !== INTERRUPT) return;
    const options = (message[2] ?? {}) as Dict;
    this.cancel(message[1] as number, typeof options['mode'] === 'string' ? options['mode'] : 'killnowait');
  }
}

/** A caller on another node, as the caller of one call here; what the dealer sends it goes back there. */
export class ForwardedCaller extends Session {
  constructor(
    realm: string,
    caller: CallerInfo,
    private readonly answer: (message: readonly unknown[]) => void,
  ) {
    super(
      caller.session,
      realm,
      { authid: caller.authid, authrole: caller.authrole, authmethod: 'cluster', authprovider: 'cluster' },
      ANY,
      ADVANCED,
      NOBODY,
    );
  }

  override send(message: readonly unknown[]): void {
    this.answer(message);
  }
}

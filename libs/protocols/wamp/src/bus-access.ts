import { type MatchPolicy } from './uri.js';

/**
 * What a session of the bus realm may do with the topics the realm shares with the bus: the broker's
 * one topic authorization (scopes and `authorization` rules), asked in the realm's own URIs. Sessions
 * of other realms have none; WAMP roles are asked first either way.
 */
export interface BusAccess {
  mayPublish(uri: string): boolean;
  maySubscribe(match: MatchPolicy, uri: string): boolean;
  /** Whether an event on `uri` may reach the session; asked only when `checksReads`. */
  mayRead(uri: string): boolean;
  readonly checksReads: boolean;
}

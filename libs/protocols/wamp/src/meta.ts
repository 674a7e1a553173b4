import { type RouterProcedure } from './dealer.js';
import { E } from './errors.js';
import { isId } from './ids.js';
import { type Args } from './messages.js';
import { type Session } from './wamp-session.js';

export const ON_JOIN = 'wamp.session.on_join';
export const ON_LEAVE = 'wamp.session.on_leave';

/** `count` and `list` take an optional list of authroles to filter on, as in the spec. */
function filtered(sessions: ReadonlyMap<number, Session>, args: Args): Session[] | string {
  const roles = args?.[0];
  const all = [...sessions.values()];
  if (roles === undefined) return all;
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string'))
    return 'the filter must be a list of authroles';
  return all.filter((s) => roles.includes(s.identity.authrole));
}

/** The session meta API procedures of one realm (`wamp.session.count`, `list`, `get`). */
export function sessionMetaProcedures(sessions: ReadonlyMap<number, Session>): Map<string, RouterProcedure> {
  return new Map<string, RouterProcedure>([
    [
      'wamp.session.count',
      (_caller, args) => {
        const found = filtered(sessions, args);
        return typeof found === 'string'
          ? { error: E.invalidArgument, message: found }
          : { args: [found.length] };
      },
    ],
    [
      'wamp.session.list',
      (_caller, args) => {
        const found = filtered(sessions, args);
        return typeof found === 'string'
          ? { error: E.invalidArgument, message: found }
          : { args: [found.map((s) => s.id)] };
      },
    ],
    [
      'wamp.session.get',
      (_caller, args) => {
        const id = args?.[0];
        if (!isId(id)) return { error: E.invalidArgument, message: 'expected a session ID' };
        const session = sessions.get(id);
        if (session === undefined)
          return { error: E.noSuchSession, message: `no session ${id} in this realm` };
        return { args: [session.details()] };
      },
    ],
  ]);
}

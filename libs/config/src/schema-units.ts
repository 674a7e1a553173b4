import proxyaddr from 'proxy-addr';
import { z } from 'zod';

// Building blocks every section's schema uses.

/** The longest delay setTimeout and setInterval take (2^31 - 1 ms): above it Node waits 1 ms instead. */
export const MAX_TIMER_MS = 2_147_483_647;
/** A time in milliseconds that the broker waits with a timer. */
export const timerMs = z.number().int().positive().max(MAX_TIMER_MS);
/** An address, a CIDR or one of proxy-addr's names (loopback, linklocal, uniquelocal). */
export const proxyEntry = z.string().refine(
  (entry) => {
    try {
      proxyaddr.compile(entry);
      return true;
    } catch {
      return false;
    }
  },
  {
    message: "expected an IP address, a CIDR ('10.0.0.0/8', 'fd00::/8') or loopback, linklocal, uniquelocal",
  },
);

/** The same, where 0 turns the timer off. */
export const timerMsOrOff = z.number().int().nonnegative().max(MAX_TIMER_MS);

/**
 * The share of the event loop each connection's own messages may take (see the gateway's
 * InputBudget): past `burstMs` of work ahead of `share` of a core, its reads pause until it is paid
 * back. Off by default, as in Mosquitto and EMQX: a publisher's fan-out is charged to it, so a
 * trusted publisher to many subscribers would be slowed; `{}` turns it on with the values below.
 */
export const inputBudget = z.union([
  z.literal(false),
  z
    .object({
      share: z.number().gt(0).max(1).default(0.25),
      burstMs: z.number().positive().max(10_000).default(100),
    })
    .strict(),
]);

/** A socket, or a connection whose sends are held in one. */
export interface Uncorkable {
  uncork(): void;
}

const pending: Uncorkable[] = [];
let scheduled = false;

function uncorkAll(): void {
  scheduled = false;
  // Targets added while these run (none expected: uncorking does not send) wait for the next turn.
  const due = pending.splice(0, pending.length);
  for (const target of due) target.uncork();
}

/**
 * Uncorks `target` once the I/O callbacks of this turn of the event loop have run: setImmediate fires
 * right after the poll phase, and one setImmediate serves every socket corked in the turn. So the
 * frames that many reads produce for one connection (a callee's INVOCATIONs from a hundred callers,
 * a subscriber's PUBLISHes from ten publishers) leave in one write, where uncorking on
 * process.nextTick wrote once per read. Nothing waits for a timer or for more input.
 */
export function uncorkAfterIo(target: Uncorkable): void {
  pending.push(target);
  if (!scheduled) {
    scheduled = true;
    setImmediate(uncorkAll);
  }
}

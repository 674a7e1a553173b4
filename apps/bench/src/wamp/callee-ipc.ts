import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { forkLoadProcess, nextMessage } from '../child-servers.js';

/** From the parent to the callee process. */
export interface CalleeCommand {
  readonly type: 'stop';
}

/** From the callee process to the parent. */
export type CalleeReport =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'stopped'; readonly errors: [string, number][] };

export interface RemoteCallee {
  /** Stops the callee and returns what it counted as errors. */
  stop(): Promise<ReadonlyMap<string, number>>;
}

/** Forks the callee process and waits until its procedure is registered. */
export async function startCallee(port: number, procedure: string, timeoutMs: number): Promise<RemoteCallee> {
  const child = forkLoadProcess(new URL('./callee-process.js', import.meta.url), [
    String(port),
    String(timeoutMs),
    procedure,
  ]);
  const first = await nextMessage<CalleeReport>(child, 'callee process', 'to register', timeoutMs);
  if (first.type !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`callee: ${first.type === 'failed' ? first.message : first.type}`);
  }
  return {
    stop: async () => {
      const answer = nextMessage<CalleeReport>(child, 'callee process', 'to stop', timeoutMs);
      child.send({ type: 'stop' } satisfies CalleeCommand);
      const report = await answer.finally(() => exited(child, timeoutMs));
      if (report.type !== 'stopped') throw new Error(`callee answered stop with ${report.type}`);
      return new Map(report.errors);
    },
  };
}

/** Lets the child exit by itself, which closes its WebSocket cleanly; kills it if it does not. */
async function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await once(child, 'exit');
  clearTimeout(timer);
}

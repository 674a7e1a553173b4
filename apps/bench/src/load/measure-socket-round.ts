import type WebSocket from 'ws';
import { type ServerProcess } from '../child-servers.js';
import { CpuWindow } from '../cpu-window.js';
import { roundResult, type MeasuredLoad } from '../measure-round.js';
import { type RoundResult } from '../report.js';
import { closeAll } from './ws-client.js';

export interface WindowHooks {
  readonly onWindowStart: () => void;
  readonly onWindowEnd: () => void;
}

/**
 * One round of a load that opens its own connections (fresh each round, so no round inherits
 * another's state), with both processes' CPU sampled over the measured window; the connections are
 * closed before the next round.
 */
export async function measureSocketRound(
  server: ServerProcess,
  round: number,
  closeTimeoutMs: number,
  run: (hooks: WindowHooks) => Promise<MeasuredLoad & { readonly sockets: readonly WebSocket[] }>,
): Promise<RoundResult> {
  const cpu = new CpuWindow(server.pid);
  const load = await run({ onWindowStart: () => cpu.start(), onWindowEnd: () => cpu.end() });
  await closeAll(load.sockets, closeTimeoutMs);
  return roundResult(server.name, round, load, cpu);
}

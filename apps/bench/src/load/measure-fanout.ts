import { type ServerProcess } from '../child-servers.js';
import { CpuWindow } from '../cpu-window.js';
import { roundResult } from '../measure-round.js';
import { type RoundResult } from '../report.js';
import { runFanout, type FanoutClients, type FanoutSettings } from './fanout-load.js';
import { closeAll } from './ws-client.js';

/** Fresh connections per round, so a round never inherits another's state; closed before the next. */
export async function measureFanoutRound(
  server: ServerProcess,
  round: number,
  clients: FanoutClients,
  settings: Omit<FanoutSettings, 'onWindowStart' | 'onWindowEnd'>,
): Promise<RoundResult> {
  const cpu = new CpuWindow(server.pid);
  const load = await runFanout(clients, {
    ...settings,
    onWindowStart: () => cpu.start(),
    onWindowEnd: () => cpu.end(),
  });
  await closeAll(load.sockets, settings.timeoutMs);
  return roundResult(server.name, round, load, cpu);
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summary } from './mqtt-report.js';
import { type MemoryRow, type Scenario, type ThroughputRow } from './mqtt-rounds.js';

const QOS0: Scenario = {
  id: 'q0-fanin',
  label: 'QoS 0, 10 → 1',
  qos: 0,
  publishers: 10,
  subscribers: 1,
  window: 1,
};

function row(server: string, deliveriesPerSec: number, errors: Record<string, number> = {}): ThroughputRow {
  return {
    round: 1,
    server,
    scenario: QOS0,
    deliveriesPerSec,
    p50Ms: 0,
    p99Ms: 0,
    cpu: { server: 0.5, client: 0.5, serverMs: 500 },
    serverCpuUsPerMessage: 10,
    errors: new Map(Object.entries(errors)),
    published: deliveriesPerSec,
    received: deliveriesPerSec,
  };
}

function memory(server: string, loadedKiB: number): MemoryRow {
  return { round: 1, server, connections: 1000, baselineKiB: 1000, loadedKiB, errors: new Map() };
}

const MEMORY = [memory('broker', 2000), memory('mosquitto', 2000), memory('aedes', 4000)];

describe('MQTT benchmark verdicts', () => {
  it('a faster broker meets its QoS 0 targets when no row counted an error', () => {
    const { verdicts } = summary(
      [QOS0],
      [row('broker', 300), row('mosquitto', 200), row('aedes', 100)],
      [],
      MEMORY,
    );
    assert.equal(verdicts.allMet, true, verdicts.lines.join('\n'));
    assert.ok(verdicts.lines.every((line) => line.endsWith(': met')));
  });

  it('errors in the rows make a QoS 0 ratio NOT met, however fast it reads, and say how many', () => {
    const lost = row('broker', 300, { 'lost messages': 7 });
    const { verdicts } = summary([QOS0], [lost, row('mosquitto', 200), row('aedes', 100)], [], MEMORY);
    assert.equal(verdicts.allMet, false);
    const line = verdicts.lines.find((l) => l.includes('broker / Mosquitto')) ?? '';
    assert.match(line, /1\.50× \(target ≥ 1\) with 7 errors in its rows: \*\*NOT met\*\*/);
  });

  it("a reference server's errors make the ratio against it NOT met too: its rate is not a rate", () => {
    const { verdicts } = summary(
      [QOS0],
      [row('broker', 300), row('mosquitto', 200, { 'dropped connections': 1 }), row('aedes', 100)],
      [],
      MEMORY,
    );
    assert.equal(verdicts.allMet, false);
    assert.match(verdicts.lines.find((l) => l.includes('broker / Aedes')) ?? '', /: met$/);
  });
});

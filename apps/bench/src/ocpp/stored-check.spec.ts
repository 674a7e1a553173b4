import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MeterValueStore } from './meter-value-store.js';
import { checkStored } from './stored-check.js';

const dir = mkdtempSync(join(tmpdir(), 'stored-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function storeWith(name: string, values: [string, number][]): Promise<string> {
  const path = join(dir, `${name}.db`);
  const store = new MeterValueStore(path);
  for (const [identity, reading] of values) {
    await store.add(identity, {
      connectorId: 1,
      meterValue: [{ timestamp: '2026-01-01T00:00:00Z', sampledValue: [{ value: String(reading) }] }],
    });
  }
  return path;
}

describe('the OCPP benchmark reads stored meter values back', () => {
  it('finds nothing wrong when each answered reading is stored once (unanswered ones may be there too)', async () => {
    const path = await storeWith('whole', [
      ['CP-1', 2],
      ['CP-1', 4],
      ['CP-2', 1],
      ['CP-2', 3],
    ]);
    const answered = new Map([
      ['CP-1', [2, 4]],
      ['CP-2', [1]],
    ]);
    assert.deepEqual(checkStored({ path, table: 'meter_values' }, answered), new Map());
  });

  it('counts an answered reading that is missing, and one stored twice', async () => {
    const path = await storeWith('broken', [
      ['CP-1', 2],
      ['CP-1', 2],
    ]);
    const answered = new Map([['CP-1', [2, 4]]]);
    assert.deepEqual(
      checkStored({ path, table: 'meter_values' }, answered),
      new Map([
        ['MeterValues stored more than once', 1],
        ['answered MeterValues not stored', 1],
      ]),
    );
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type DashboardPanel, DashboardPanels } from './dashboard-panels.js';
import { type PanelCalls } from './panel-calls.js';

const CALLS: PanelCalls = {
  title: 'Call a device',
  targetLabel: 'Serial',
  route: 'devices/{target}/commands/{action}',
  actions: [
    { id: 'reboot', example: { delay: 0 } },
    { id: 'ping', example: {} },
  ],
};

function panel(id: string, calls?: PanelCalls): DashboardPanel {
  return {
    id,
    title: id,
    columns: [{ key: 'serial', label: 'Serial' }],
    empty: 'none',
    ...(calls !== undefined && { calls }),
    rows: () => [{ key: 'd-1', cells: { serial: 'd-1' } }],
  };
}

describe('DashboardPanels', () => {
  it('lists the calls of the panels that offer some, by panel, in the order they were added', () => {
    const panels = new DashboardPanels();
    panels.add(panel('devices', CALLS));
    panels.add(panel('plain'));
    panels.add(panel('pumps', { ...CALLS, title: 'Call a pump', route: 'pumps/{target}/{action}' }));
    assert.deepEqual(panels.calls(), [
      { panel: 'devices', ...CALLS },
      { panel: 'pumps', ...CALLS, title: 'Call a pump', route: 'pumps/{target}/{action}' },
    ]);
  });

  it('keeps the calls out of what the feed reads each tick', async () => {
    const panels = new DashboardPanels();
    panels.add(panel('devices', CALLS));
    assert.deepEqual(await panels.read(), [
      {
        id: 'devices',
        title: 'devices',
        columns: [{ key: 'serial', label: 'Serial' }],
        empty: 'none',
        rows: [{ key: 'd-1', cells: { serial: 'd-1' } }],
        missing: [],
      },
    ]);
  });

  it('passes on the nodes a panel gathered across the cluster could not ask', async () => {
    const panels = new DashboardPanels();
    panels.add({
      ...panel('topics'),
      rows: () => Promise.resolve({ rows: [{ key: 't', cells: { serial: 't' } }], missing: ['node-b'] }),
    });
    const [read] = await panels.read();
    assert.deepEqual(read?.rows, [{ key: 't', cells: { serial: 't' } }]);
    assert.deepEqual(read?.missing, ['node-b']);
  });

  it('refuses a panel whose calls could not make a form, and one with an id already there', () => {
    const panels = new DashboardPanels();
    assert.throws(
      () => panels.add(panel('devices', { ...CALLS, route: '../metrics/{target}/{action}' })),
      /dashboard panel devices: a call route/,
    );
    panels.add(panel('devices', CALLS));
    assert.throws(() => panels.add(panel('devices')), /a dashboard panel devices is already there/);
    assert.equal(panels.calls().length, 1);
  });
});

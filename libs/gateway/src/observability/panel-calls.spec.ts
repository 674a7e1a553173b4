import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkPanelCalls, MAX_PANEL_CALL_ACTIONS, type PanelCalls } from './panel-calls.js';

function calls(route: string, ids: readonly string[] = ['Reset']): PanelCalls {
  return {
    title: 'Call a device',
    targetLabel: 'Serial',
    route,
    actions: ids.map((id) => ({ id, example: {} })),
  };
}

describe('checkPanelCalls', () => {
  it('takes a relative route with {target} and {action} once each, as whole segments', () => {
    for (const route of [
      'charge-points/{target}/calls/{action}',
      '{action}/{target}',
      'devices/{target}/commands/{action}/v1.2',
    ]) {
      checkPanelCalls('p', calls(route));
    }
  });

  it('refuses a route that could leave the admin API or lacks a placeholder, naming the panel', () => {
    for (const route of [
      '/charge-points/{target}/calls/{action}',
      'https://elsewhere.example/{target}/{action}',
      '../metrics/{target}/{action}',
      'a/./{target}/{action}',
      'a//{target}/{action}',
      'a/{target}/{action}?x=1',
      'a/{target}/{action}#x',
      'a/{target}',
      'a/{action}',
      'a/{target}/{target}/{action}',
      'a/x{target}/{action}',
      'a/{target}/{action}/',
      'a b/{target}/{action}',
    ]) {
      assert.throws(
        () => checkPanelCalls('devices', calls(route)),
        /dashboard panel devices: a call route/,
        route,
      );
    }
  });

  it('refuses no action, too many, a repeated one, and ids that are not plain path segments', () => {
    const route = 'devices/{target}/{action}';
    assert.throws(() => checkPanelCalls('p', calls(route, [])), /1 to 100 call actions, not 0/);
    const many = Array.from({ length: MAX_PANEL_CALL_ACTIONS + 1 }, (_, i) => `a${i}`);
    assert.throws(() => checkPanelCalls('p', calls(route, many)), /not 101/);
    checkPanelCalls('p', calls(route, many.slice(1)));
    for (const ids of [['Reset', 'Reset'], ['..'], ['a.b'], ['a/b'], [''], ['x'.repeat(65)], ['é']]) {
      assert.throws(() => checkPanelCalls('p', calls(route, ids)), /unique path segments/, ids.join());
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CallEvent } from './bus-events.js';
import { CentralSystem } from './central-system.js';
import { type ActionHandler, type HandlerContext } from './handlers/index.js';

function context(accepted: boolean): HandlerContext {
  return {
    identity: 'CP-1',
    store: null as never,
    settings: null as never,
    isKnown: async () => false,
    accepted,
    now: () => new Date(0),
    charge: () => undefined,
  };
}

const handlers = new Map<string, ActionHandler<never>>([
  ['BootNotification', async (_p, ctx) => ((ctx.accepted = true), { status: 'Accepted' })],
  ['Heartbeat', async () => ({ currentTime: 'x' })],
]);

describe('CentralSystem', () => {
  it('admits BootNotification always, the rest only once accepted, unknown handlers never', () => {
    const central = new CentralSystem(context(false), handlers, () => undefined);
    assert.equal(central.admit('BootNotification'), null);
    assert.equal(central.admit('Heartbeat')?.code, 'SecurityError');
    assert.equal(central.admit('Authorize')?.code, 'NotSupported');
  });

  it('runs the handler, then reports the call as an event', async () => {
    const events: CallEvent[] = [];
    const ctx = context(false);
    const central = new CentralSystem(ctx, handlers, (e) => events.push(e));
    assert.deepEqual(await central.handle('BootNotification', { chargePointVendor: 'A' }, 'm1'), {
      status: 'Accepted',
    });
    assert.equal(ctx.accepted, true);
    assert.equal(central.admit('Heartbeat'), null);
    assert.deepEqual(events, [
      {
        identity: 'CP-1',
        action: 'BootNotification',
        messageId: 'm1',
        request: { chargePointVendor: 'A' },
        response: { status: 'Accepted' },
        at: new Date(0),
      },
    ]);
  });
});

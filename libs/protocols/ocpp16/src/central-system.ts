import { type CallEvent } from './bus-events.js';
import { OcppError } from './errors.js';
import { type ActionHandler, type HandlerContext } from './handlers/index.js';
import { type Payload } from './rpc-frame.js';
import { type CallDispatcher } from './ocpp-session.js';

/**
 * The central system's side of one connection: which CALLs it takes (a handler exists, the charge
 * point has been accepted), running them, and reporting each handled call as an event.
 */
export class CentralSystem implements CallDispatcher {
  constructor(
    private readonly context: HandlerContext,
    private readonly handlers: ReadonlyMap<string, ActionHandler<never>>,
    private readonly onEvent: (event: CallEvent) => void,
  ) {}

  admit(action: string): OcppError | null {
    if (!this.handlers.has(action)) {
      return new OcppError('NotSupported', `This central system does not handle ${action}.`);
    }
    if (action !== 'BootNotification' && !this.context.accepted) {
      return new OcppError(
        'SecurityError',
        `${action} before an accepted BootNotification: send BootNotification first.`,
      );
    }
    return null;
  }

  async handle(action: string, payload: Payload, messageId: string): Promise<Payload> {
    const handler = this.handlers.get(action);
    if (handler === undefined)
      throw new OcppError('NotSupported', `This central system does not handle ${action}.`);
    const response = await handler(payload as never, this.context);
    this.onEvent({
      identity: this.context.identity,
      action,
      messageId,
      request: payload,
      response,
      at: this.context.now(),
    });
    return response;
  }
}

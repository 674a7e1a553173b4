import { Module } from '@nestjs/common';
import {
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
} from '#broker/gateway';

/** Echoes every message; reports its context on "whoami"; "burst:N" and "flood:N" send many. Policy 'omit'. */
@Subprotocol({ name: 'echo.v1', onUnsupported: 'omit', perMessageDeflate: {} })
export class EchoSubprotocol implements SubprotocolHandler {
  open(connection: Connection, context: ConnectionContext): void {
    connection.onMessage((data, isBinary) => {
      const text = isBinary ? null : data.toString('utf8');
      if (text === 'whoami') {
        const { id, endpoint, protocol, params, principal } = context;
        return connection.send(JSON.stringify({ id, endpoint, protocol, params, principal }));
      }
      const burst = text?.match(/^burst:(\d+)$/);
      if (burst) {
        // One tick, many small messages, text and binary alternating: the gateway batches the writes.
        for (let i = 0; i < Number(burst[1]); i++)
          connection.send(i % 2 === 0 ? `m${i}` : Buffer.from(`b${i}`));
        return;
      }
      const flood = text?.match(/^flood:(\d+)$/);
      if (flood) {
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        for (let i = 0; i < Number(flood[1]); i++) connection.send(chunk);
        return;
      }
      connection.send(isBinary ? data : (text as string));
    });
  }
}

/** Binary only, small maxPayload: for the message-type and size policies. */
@Subprotocol({ name: 'bin.v1', onUnsupported: 'reject', messages: 'binary', maxPayload: 1024 })
export class BinarySubprotocol implements SubprotocolHandler {
  open(connection: Connection): void {
    connection.onMessage((data) => connection.send(data));
  }
}

/** Refuses handshakes whose `:id` parameter is not known, like OCPP's unknown charge point. */
@Subprotocol({ name: 'known.v1', onUnsupported: 'reject' })
export class KnownIdSubprotocol implements SubprotocolHandler {
  async checkHandshake(context: { params: Readonly<Record<string, string>> }) {
    if (context.params['id'] === 'known') return null;
    // A module answering a status that is not an error must not turn a refusal into a success.
    if (context.params['id'] === 'weird') return { status: 200, title: 'Odd', detail: 'not an error status' };
    return { status: 404, title: 'Unknown id', detail: `No such id: ${context.params['id'] ?? ''}` };
  }
  open(connection: Connection, context: ConnectionContext): void {
    connection.send(JSON.stringify(context.params));
  }
}

/** Says goodbye before the gateway's close at shutdown. */
@Subprotocol({ name: 'polite.v1', onUnsupported: 'reject' })
export class PoliteSubprotocol implements SubprotocolHandler {
  open(): void {}
  goodbye(connection: Connection): void {
    connection.send('goodbye');
  }
}

/** Its handshake check takes a while, as a store lookup would: widens the window between check and open. */
@Subprotocol({ name: 'slowcheck.v1', onUnsupported: 'omit' })
export class SlowCheckSubprotocol implements SubprotocolHandler {
  async checkHandshake() {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return null;
  }
  open(): void {}
}

/**
 * A buggy module: throws on "boom", rejects asynchronously on "async-boom", throws from its close
 * handler and from its goodbye. The gateway must contain all of them.
 */
@Subprotocol({ name: 'buggy.v1', onUnsupported: 'reject' })
export class BuggySubprotocol implements SubprotocolHandler {
  open(connection: Connection): void {
    connection.onMessage(async (data) => {
      if (data.toString() === 'boom') throw new Error('module bug');
      await Promise.resolve();
      if (data.toString() === 'async-boom') throw new Error('async module bug');
      connection.send(data.toString());
    });
    connection.onClose(() => {
      throw new Error('close handler bug');
    });
  }
  goodbye(): void {
    throw new Error('goodbye bug');
  }
}

@Module({
  providers: [
    EchoSubprotocol,
    BinarySubprotocol,
    KnownIdSubprotocol,
    PoliteSubprotocol,
    BuggySubprotocol,
    SlowCheckSubprotocol,
  ],
})
export class TestModulesModule {}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  Module,
  UseGuards,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  SubscribeMessage,
  WebSocketGateway,
  WebSocketServer,
  WsException,
} from '@nestjs/websockets';
import { IsString, MaxLength } from 'class-validator';
import {
  BrokerWsAdapter,
  type ConnectionContext,
  type GatewayClient,
  type GatewayServer,
} from '#broker/gateway';
import WebSocket from 'ws';
import { MessageQueue } from './support/message-queue.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, opened, refusedStatus, waitFor } from './support/ws-helpers.js';

class SayDto {
  @IsString()
  @MaxLength(20)
  text!: string;
}

/** Only principals whose token carries `role: writer` may shout. */
@Injectable()
class WritersOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToWs().getClient<GatewayClient>().context.principal?.claims['role'] === 'writer';
  }
}

@WebSocketGateway({ subprotocol: { name: 'events.v1', onUnsupported: 'reject' } })
@UsePipes(
  new ValidationPipe({
    exceptionFactory: (errors) =>
      new WsException(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; ')),
  }),
)
class EventsGateway implements OnGatewayConnection, OnGatewayDisconnect {
  @WebSocketServer() server!: GatewayServer;
  readonly gone: string[] = [];

  handleConnection(client: GatewayClient, context: ConnectionContext): void {
    client.emit('welcome', {
      user: context.principal?.subject ?? null,
      room: context.params['room'],
      same: client.context === context,
    });
  }

  handleDisconnect(client: GatewayClient): void {
    this.gone.push(client.context.principal?.subject ?? '?');
  }

  @SubscribeMessage('echo')
  echo(@MessageBody() body: SayDto): { event: string; data: string } {
    return { event: 'echoed', data: body.text };
  }

  @UseGuards(WritersOnly)
  @SubscribeMessage('shout')
  shout(@MessageBody() body: SayDto, @ConnectedSocket() client: GatewayClient): void {
    this.server.broadcast('shouted', {
      from: client.context.principal?.subject,
      text: body.text.toUpperCase(),
    });
  }
}

@Module({ providers: [EventsGateway] })
class EventsModule {}

const CONFIG = {
  endpoints: [
    {
      path: '/events/:room',
      subprotocols: ['events.v1'],
      defaultModule: 'events.v1',
      auth: { mode: 'required', carriers: ['header'] },
    },
  ],
};

describe('@WebSocketGateway({ subprotocol }) behind the broker handshake (BrokerWsAdapter)', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker(CONFIG, [EventsModule], (app) =>
      app.useWebSocketAdapter(new BrokerWsAdapter(app)),
    );
  });
  after(() => broker.close());

  async function join(
    sub: string,
    claims: Record<string, unknown> = {},
  ): Promise<{ ws: WebSocket; queue: MessageQueue }> {
    const token = await signToken({ sub, claims });
    const ws = new WebSocket(`ws://127.0.0.1:${broker.port}/events/lobby`, 'events.v1', {
      headers: { Authorization: `Bearer ${token}` },
    });
    const queue = new MessageQueue(ws);
    await opened(ws);
    return { ws, queue };
  }

  it('the broker decides the upgrade: no token 401, another subprotocol 400, a valid one 101 with events.v1', async () => {
    assert.equal(
      await refusedStatus(new WebSocket(`ws://127.0.0.1:${broker.port}/events/lobby`, 'events.v1')),
      401,
    );
    const token = await signToken();
    const other = new WebSocket(`ws://127.0.0.1:${broker.port}/events/lobby`, 'chat.v1', {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(await refusedStatus(other), 400);
    const { ws } = await join('alice');
    assert.equal(ws.protocol, 'events.v1');
    ws.close();
  });

  it('handleConnection gets the client and the handshake context (principal, path parameters)', async () => {
    const { ws, queue } = await join('alice');
    assert.deepEqual(await queue.json(), {
      event: 'welcome',
      data: { user: 'alice', room: 'lobby', same: true },
    });
    ws.close();
  });

  it('@SubscribeMessage answers {event, data}; ValidationPipe with WsException answers an exception event', async () => {
    const { ws, queue } = await join('alice');
    await queue.json();
    ws.send(JSON.stringify({ event: 'echo', data: { text: 'hi' } }));
    assert.deepEqual(await queue.json(), { event: 'echoed', data: 'hi' });
    ws.send(JSON.stringify({ event: 'echo', data: { text: 'x'.repeat(21) } }));
    // Nest's exception filter names the message that failed (its `cause`).
    assert.deepEqual(await queue.json(), {
      event: 'exception',
      data: {
        status: 'error',
        message: 'text must be shorter than or equal to 20 characters',
        cause: { pattern: 'echo', data: { text: 'x'.repeat(21) } },
      },
    });
    ws.close();
  });

  it('bad input gets an exception event and the connection stays usable: not JSON, no event, unknown event, binary', async () => {
    const { ws, queue } = await join('alice');
    await queue.json();
    for (const bad of ['{not json', '{"data":1}', '{"event":"nope"}']) {
      ws.send(bad);
      const answer = await queue.json();
      assert.equal(answer['event'], 'exception', bad);
      assert.equal((answer['data'] as Record<string, unknown>)['status'], 'error');
    }
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    const code = await closed(ws);
    assert.equal(code.code, 1003, 'the subprotocol takes text only (messages: text)');
    const again = await join('alice');
    await again.queue.json();
    again.ws.send(JSON.stringify({ event: 'echo', data: { text: 'still here' } }));
    assert.deepEqual(await again.queue.json(), { event: 'echoed', data: 'still here' });
    again.ws.close();
  });

  it('guards run: a reader is refused (Forbidden resource); a writer broadcasts to every client of the gateway', async () => {
    const reader = await join('rita');
    const writer = await join('wendy', { role: 'writer' });
    await reader.queue.json();
    await writer.queue.json();
    reader.ws.send(JSON.stringify({ event: 'shout', data: { text: 'hey' } }));
    assert.deepEqual(await reader.queue.json(), {
      event: 'exception',
      data: {
        status: 'error',
        message: 'Forbidden resource',
        cause: { pattern: 'shout', data: { text: 'hey' } },
      },
    });
    writer.ws.send(JSON.stringify({ event: 'shout', data: { text: 'hey' } }));
    for (const { queue } of [reader, writer]) {
      assert.deepEqual(await queue.json(), { event: 'shouted', data: { from: 'wendy', text: 'HEY' } });
    }
    reader.ws.close();
    writer.ws.close();
  });

  it('handleDisconnect runs when the client goes', async () => {
    const gateway = broker.app.get(EventsGateway);
    const { ws, queue } = await join('dora');
    await queue.json();
    ws.close();
    await waitFor(() => gateway.gone.includes('dora'));
  });
});

describe('BrokerWsAdapter with a message parser of the application’s', () => {
  let broker: TestBroker;
  before(async () => {
    // "event|json data" text lines instead of {event, data} objects; a line without "|" is ignored.
    const messageParser = (data: Buffer) => {
      const text = data.toString('utf8');
      const bar = text.indexOf('|');
      return bar < 0 ? null : { event: text.slice(0, bar), data: JSON.parse(text.slice(bar + 1)) as unknown };
    };
    broker = await startTestBroker(CONFIG, [EventsModule], (app) =>
      app.useWebSocketAdapter(new BrokerWsAdapter(app, { messageParser })),
    );
  });
  after(() => broker.close());

  it('reads the application’s shape, ignores what it returns null for, and answers a throw with an exception event', async () => {
    const token = await signToken({ sub: 'pat' });
    const ws = new WebSocket(`ws://127.0.0.1:${broker.port}/events/lobby`, 'events.v1', {
      headers: { Authorization: `Bearer ${token}` },
    });
    const queue = new MessageQueue(ws);
    await opened(ws);
    assert.equal((await queue.json())['event'], 'welcome');
    ws.send('no bar here');
    ws.send('echo|{"text":"piped"}');
    assert.deepEqual(await queue.json(), { event: 'echoed', data: 'piped' });
    ws.send('echo|{not json');
    const refusal = await queue.json();
    assert.equal(refusal['event'], 'exception');
    ws.close();
  });
});

describe('gateways with a subprotocol: boot errors', () => {
  it('a gateway whose subprotocol name is taken by a module stops the boot', async () => {
    @WebSocketGateway({ subprotocol: { name: 'chat.v1', onUnsupported: 'reject' } })
    class ClashingGateway {}
    @Module({ providers: [ClashingGateway] })
    class Clash {}
    await assert.rejects(
      startTestBroker({ endpoints: [{ path: '/c', subprotocols: ['chat.v1'] }] }, [Clash], (app) =>
        app.useWebSocketAdapter(new BrokerWsAdapter(app)),
      ),
      /two subprotocol modules are named 'chat.v1'/,
    );
  });

  it('an application without BrokerWsAdapter is told what to add', async () => {
    await assert.rejects(
      startTestBroker(CONFIG, [EventsModule]),
      /EventsGateway \('events.v1'\) declares @WebSocketGateway\(\{ subprotocol \}\).*app\.useWebSocketAdapter\(new BrokerWsAdapter\(app\)\)/,
    );
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { MqttModule } from '#broker/protocols/mqtt';
import { connectAsync, type MqttClient } from 'mqtt';
import { MQTT_ENDPOINT } from './support/mqtt-helpers.js';
import { answerStatus, rawExchange, upgradeRequest } from './support/raw-http.js';
import { endpointCounter, startTestBroker, type TestBroker } from './support/test-broker.js';
import { closed, opened, waitFor } from './support/ws-helpers.js';

/** broker_input_pauses_total of one endpoint. */
function inputPauses(broker: TestBroker, endpoint: string): Promise<number> {
  return endpointCounter(broker, 'broker_input_pauses_total', endpoint);
}

/** 200 distinct wildcard filters (the session's limit is 256): the worst-message benchmark's costliest shape. */
function wildcardFilters(prefix: string): Record<string, { qos: 0 }> {
  const filters: Record<string, { qos: 0 }> = {};
  for (let i = 0; i < 200; i++) filters[`${prefix}/${i}/+/x/#`] = { qos: 0 };
  return filters;
}

describe('fair share: handshakes per address, and each connection held to its share of the loop', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker(
      {
        mqtt: {
          sysIntervalSec: 0,
          tcpPort: 0,
          tcpHost: '127.0.0.1',
          tcpInputBudget: { share: 0.01, burstMs: 0.01 },
        },
        endpoints: [
          // A share so small that a few costly SUBSCRIBEs overrun it.
          { ...MQTT_ENDPOINT, inputBudget: { share: 0.01, burstMs: 0.01 } },
          { ...MQTT_ENDPOINT, path: '/mqtt-unbounded', inputBudget: false },
          { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
        ],
        // One handshake per 100 s after a burst of three: the fourth is refused however slow the run.
        limits: { handshakesPerSecondPerAddress: 0.01, handshakeBurstPerAddress: 3 },
      },
      [MqttModule],
    );
  });
  after(() => broker.close());

  /** 20 SUBSCRIBEs of 200 wildcard filters at once: each answered in full, the client still connected. */
  async function subscribeHard(client: MqttClient): Promise<void> {
    // The same filters again and again, as the worst-message benchmark's attacker does.
    const subacks = await Promise.all(
      Array.from({ length: 20 }, () => client.subscribeAsync(wildcardFilters('t'))),
    );
    assert.equal(subacks.flat().length, 20 * 200);
    assert.ok(subacks.flat().every((grant) => grant.qos === 0));
    assert.equal(client.connected, true);
  }

  it('past its burst an address gets 429 with Retry-After, before any credential is read; other addresses go on', async () => {
    const first = Array.from({ length: 3 }, () => new WebSocket(`${broker.url}/chat`, 'chat.v1'));
    await Promise.all(first.map(opened));
    const refused = await rawExchange(
      broker.port,
      upgradeRequest('/chat', {
        'Sec-WebSocket-Protocol': 'chat.v1',
        Authorization: 'Bearer not-even-a-jwt',
      }),
    );
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1, refused.raw);
    assert.match(refused.body, /Too many handshakes from your address/);
    assert.equal(refused.closed, true);
    const elsewhere = new WebSocket(`${broker.url}/chat`, 'chat.v1', { localAddress: '127.0.0.2' });
    await opened(elsewhere);
    for (const ws of [...first, elsewhere]) {
      ws.close();
      await closed(ws);
    }
  });

  it('an address refused more than its burst beyond its rate is refused at accept, before any parsing; others go on', async () => {
    const flooder = '127.0.0.9';
    const request = upgradeRequest('/chat', { 'Sec-WebSocket-Protocol': 'chat.v1' });
    // What a handshake from `from` gets: its status, or null for a connection closed with no answer.
    const ask = (from: string): Promise<number | null> => answerStatus(broker.port, request, from);
    const statuses: (number | null)[] = [];
    for (let i = 0; i < 7; i++) statuses.push(await ask(flooder));
    // Its burst of three, then more refusals than its burst: a flood, as far as the broker can tell.
    assert.deepEqual(statuses, [101, 101, 101, 429, 429, 429, 429]);
    assert.equal(await ask(flooder), null);
    assert.equal(await ask(flooder), null);
    assert.equal(await ask('127.0.0.10'), 101);
  });

  it("a client over its share is paused, not cut: every SUBACK arrives; an unbounded endpoint's client is never paused", async () => {
    const clients = await Promise.all(
      ['/mqtt', '/mqtt-unbounded'].map((path) =>
        // From an address of their own: 127.0.0.1 spent its handshakes above.
        connectAsync(`${broker.url}${path}`, {
          reconnectPeriod: 0,
          protocolVersion: 5,
          wsOptions: { localAddress: '127.0.0.3' },
        }),
      ),
    );
    for (const client of clients) await subscribeHard(client);
    assert.ok((await inputPauses(broker, '/mqtt')) >= 1, 'the budgeted client was paused');
    assert.equal(await inputPauses(broker, '/mqtt-unbounded'), 0);
    await Promise.all(clients.map((c) => c.endAsync()));
  });

  it('a TCP client is held to mqtt.tcpInputBudget the same way', async () => {
    const line = broker.logLines().find((l) => l['msg'] === 'mqtt tcp listener started');
    const client = await connectAsync(`mqtt://127.0.0.1:${line?.['port'] as number}`, {
      reconnectPeriod: 0,
      protocolVersion: 5,
    });
    await subscribeHard(client);
    assert.ok((await inputPauses(broker, 'tcp')) >= 1, 'the TCP client was paused');
    await client.endAsync();
  });
});

describe('fair share across reconnects: what an address owes the loop follows it to its next connection', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker(
      {
        mqtt: { sysIntervalSec: 0 },
        endpoints: [{ ...MQTT_ENDPOINT, inputBudget: { share: 0.01, burstMs: 20 } }],
      },
      [MqttModule],
    );
  });
  after(() => broker.close());

  const client = (localAddress: string) =>
    connectAsync(`${broker.url}/mqtt`, {
      reconnectPeriod: 0,
      protocolVersion: 5,
      wsOptions: { localAddress },
    });

  it('a client paused for its costly messages that opens another connection is paused at its first message; another address is not', async () => {
    const costly = await client('127.0.0.5');
    // Sent, not awaited: the client walks away while they are handled, as an abuser does.
    for (let i = 0; i < 20; i++) void costly.subscribeAsync(wildcardFilters('t')).catch(() => undefined);
    await waitFor(async () => (await inputPauses(broker, '/mqtt')) >= 1);
    costly.end(true);
    const afterCostly = await inputPauses(broker, '/mqtt');

    const bystander = await client('127.0.0.6');
    await bystander.subscribeAsync('cheap/one', { qos: 0 });
    assert.equal(
      await inputPauses(broker, '/mqtt'),
      afterCostly,
      'a cheap message from another address is not paused',
    );

    const again = await client('127.0.0.5');
    await again.subscribeAsync('cheap/one', { qos: 0 });
    assert.ok(
      (await inputPauses(broker, '/mqtt')) > afterCostly,
      'the new connection owes the address’s debt',
    );
    await Promise.all([bystander.endAsync(), again.endAsync()]);
  });
});

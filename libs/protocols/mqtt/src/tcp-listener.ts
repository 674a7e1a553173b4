import { createServer, type Server, type Socket } from 'node:net';
import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { DEFAULT_AUTH_POLICY } from '#broker/config';
import {
  authenticateFirstMessage,
  type CredentialChecks,
  GatewayMetrics,
  TokenVerifier,
} from '#broker/gateway';
import { InputBudget, systemClock } from '#broker/kit';
import { mqttConfig } from './mqtt-config.js';
import { type MqttClient } from './mqtt-client.js';
import { MqttServer } from './mqtt-server.js';

/** Bytes a TCP client may leave unread before it is cut off (the WebSocket side has outboundBufferCap). */
const TCP_OUTBOUND_CAP = 4 * 1024 * 1024;

/**
 * MQTT over plain TCP (`mqtt.tcpPort`, off by default) for devices without WebSocket: the same
 * broker and session model, credentials only in CONNECT.
 */
@Injectable()
export class MqttTcpListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | null = null;
  private readonly clients = new Map<Socket, MqttClient>();
  private readonly checks: CredentialChecks;

  constructor(
    private readonly mqtt: MqttServer,
    verifier: TokenVerifier,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.checks = {
      verifyToken: (token) => verifier.verify(token, 'first-message'),
      passwords: mqtt.passwords,
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    const { tcpPort, tcpHost } = mqttConfig.of(this.mqtt.config);
    if (tcpPort === null) return;
    const server = createServer((socket) => this.accept(socket));
    // The broker-wide connection limit, counted separately from the WebSocket side.
    server.maxConnections = this.mqtt.config.limits.maxConnections;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(tcpPort, tcpHost, () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : tcpPort;
    this.mqtt.logger.info({ host: tcpHost, port }, 'mqtt tcp listener started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    for (const client of this.clients.values()) client.goodbye(true);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A TCP client's reads paused for taking more than its share of the loop (mqtt.tcpInputBudget). */
  throttled(ms: number): void {
    this.metrics?.inputPauses.inc({ endpoint: 'tcp', subprotocol: 'mqtt' });
    this.mqtt.logger.debug(
      { pauseMs: Math.round(ms) },
      'mqtt tcp client over its share of the loop, reads paused',
    );
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    const { tcpAuthRequired, connectTimeoutMs } = mqttConfig.of(this.mqtt.config);
    // No endpoint, so no `endpoint:` scopes; the holding limits are an endpoint's defaults.
    const policy = {
      mode: tcpAuthRequired ? 'required' : 'optional',
      path: null,
      timeoutMs: connectTimeoutMs,
    } as const;
    const limits = mqttConfig.of(this.mqtt.config).tcpInputBudget;
    const budget = limits === false ? null : new InputBudget(limits, systemClock, socket, this);
    const client = this.mqtt.open(
      {
        send: (bytes) => {
          if (socket.destroyed) return;
          if (socket.writableLength + bytes.byteLength > TCP_OUTBOUND_CAP) {
            this.mqtt.logger.warn(
              { remoteAddress: socket.remoteAddress },
              'mqtt tcp client not reading, closed',
            );
            socket.destroy();
            return;
          }
          socket.write(bytes);
        },
        buffered: () => socket.writableLength,
        // A client gone meanwhile has its budget stopped: no read is left to pause.
        charge: (ms) => {
          if (!socket.destroyed) budget?.charge(ms);
        },
        close: () => {
          socket.end();
          socket.setTimeout(1000, () => socket.destroy());
        },
      },
      {
        transport: 'tcp',
        remoteAddress: socket.remoteAddress ?? '',
        connectionId: null,
        holdLimits: {
          maxQueued: DEFAULT_AUTH_POLICY.firstMessageMaxQueued,
          maxBytes: DEFAULT_AUTH_POLICY.firstMessageMaxBytes,
        },
        authenticate: (credential) => authenticateFirstMessage(credential, null, policy, this.checks),
      },
    );
    this.clients.set(socket, client);
    socket.on('data', (data) => {
      const start = budget === null ? 0 : systemClock.monotonic();
      try {
        client.receive(data);
        budget?.charge(systemClock.monotonic() - start);
      } catch (err) {
        // The WebSocket side gets this from the gateway (close 1011): one client's failure never ends the process.
        this.mqtt.logger.error({ err: (err as Error).message }, 'mqtt tcp client failed, closed');
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      budget?.stop();
      this.clients.delete(socket);
      client.transportClosed();
    });
  }
}

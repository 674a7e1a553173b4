import { Inject, Injectable } from '@nestjs/common';
import { type BrokerConfig } from '#broker/config';
import { type ConnectionCounts, type EndpointSpec, type Principal } from '#broker/handshake';
import { type WebSocket } from 'ws';
import { systemClock } from '#broker/kit';
import { HandshakeRate } from '../upgrade/handshake-rate.js';
import { HealthChecks } from '../observability/health-checks.js';
import { BROKER_CONFIG } from '../upgrade/tokens.js';
import { type WsConnection } from './ws-connection.js';
import { type RegisteredSubprotocol } from './subprotocol-registry.js';

export interface TrackedConnection {
  readonly connection: WsConnection;
  readonly ws: WebSocket;
  readonly endpoint: EndpointSpec;
  /** The parameters the request path gave the endpoint's pattern (`/ocpp/:chargePointId`). */
  readonly params: Readonly<Record<string, string>>;
  readonly module: RegisteredSubprotocol;
  readonly remoteAddress: string;
  /** Epoch milliseconds. */
  readonly openedAt: number;
  principal: Principal | null;
  alive: boolean;
  /** Message payload bytes received and sent (what the admin API lists). */
  bytesIn: number;
  bytesOut: number;
}

/** Live connections and the counts the handshake's limit check reads. */
@Injectable()
export class ConnectionRegistry implements ConnectionCounts {
  draining = false;
  private readonly byId = new Map<string, TrackedConnection>();
  private readonly endpointMembers = new Map<EndpointSpec, Set<TrackedConnection>>();
  private readonly perEndpoint = new Map<EndpointSpec, number>();
  private readonly perAddress = new Map<string, number>();
  /** Handshakes past the limit check and not yet counted as connections. */
  private reserved = 0;
  private readonly handshakeRate: HandshakeRate;

  constructor(
    private readonly health: HealthChecks,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    const { handshakesPerSecondPerAddress: perSecond, handshakeBurstPerAddress: burst } = config.limits;
    this.handshakeRate = new HandshakeRate({ perSecond, burst }, systemClock);
  }

  /** Why new connections are refused with 503 (a service they need is down), or null. */
  get unavailable(): string | null {
    return this.health.outage();
  }

  add(tracked: TrackedConnection): void {
    this.byId.set(tracked.connection.id, tracked);
    let members = this.endpointMembers.get(tracked.endpoint);
    if (members === undefined) this.endpointMembers.set(tracked.endpoint, (members = new Set()));
    members.add(tracked);
    bump(this.perEndpoint, tracked.endpoint, 1);
    bump(this.perAddress, tracked.remoteAddress, 1);
  }

  remove(tracked: TrackedConnection): void {
    if (!this.byId.delete(tracked.connection.id)) return;
    this.endpointMembers.get(tracked.endpoint)?.delete(tracked);
    bump(this.perEndpoint, tracked.endpoint, -1);
    bump(this.perAddress, tracked.remoteAddress, -1);
  }

  reserve(endpoint: EndpointSpec, address: string): () => void {
    this.reserved++;
    bump(this.perEndpoint, endpoint, 1);
    bump(this.perAddress, address, 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.reserved--;
      bump(this.perEndpoint, endpoint, -1);
      bump(this.perAddress, address, -1);
    };
  }

  takeHandshake(address: string): number {
    return this.handshakeRate.take(address);
  }

  /** `address` flooded the broker some other way (HTTP/2 rapid reset): refused at accept for a while. */
  penalize(address: string): void {
    this.handshakeRate.penalize(address);
  }

  /** Whether a connection from `address` is refused at accept: it floods handshakes far past its rate. */
  refusesAtAccept(address: string): boolean {
    return this.handshakeRate.overdrawn(address);
  }

  total(): number {
    return this.byId.size + this.reserved;
  }

  /** Open connections only (what /health and the drain report). */
  open(): number {
    return this.byId.size;
  }

  forEndpoint(endpoint: EndpointSpec): number {
    return this.perEndpoint.get(endpoint) ?? 0;
  }

  forAddress(address: string): number {
    return this.perAddress.get(address) ?? 0;
  }

  get(id: string): TrackedConnection | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<TrackedConnection> {
    return this.byId.values();
  }

  /** The open connections of one endpoint, without scanning the others. */
  onEndpoint(endpoint: EndpointSpec): Iterable<TrackedConnection> {
    return this.endpointMembers.get(endpoint) ?? [];
  }
}

function bump<K>(map: Map<K, number>, key: K, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}

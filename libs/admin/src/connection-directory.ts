import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { ConnectionRegistry, type TrackedConnection } from '#broker/gateway';
import { type ConnectionView } from './connection-view.js';

export interface ConnectionFilter {
  readonly endpoint?: string | undefined;
  readonly subprotocol?: string | undefined;
  readonly principal?: string | undefined;
  readonly address?: string | undefined;
  readonly limit: number;
}

export interface Listing {
  readonly connections: ConnectionView[];
  /** Live nodes that did not answer in time: their connections are not in the list. */
  readonly missing: string[];
}

export interface CloseRequest {
  readonly id: string;
  readonly code: number;
  readonly reason: string;
}

const LIST = 'admin.connections.list';
const GET = 'admin.connections.get';
const CLOSE = 'admin.connections.close';

/**
 * The connections the admin API sees: this node's, and in cluster mode every live node's, gathered
 * with the cluster's request time limit (scatter-gather); a close reaches whichever node holds it.
 */
@Injectable()
export class ConnectionDirectory implements OnModuleInit {
  constructor(
    private readonly connections: ConnectionRegistry,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    if (this.cluster === null) return;
    this.cluster.serve(LIST, (filter) => this.listHere(filter as ConnectionFilter));
    this.cluster.serve(GET, (id) => this.getHere(String(id)));
    this.cluster.serve(CLOSE, (request) => this.closeHere(request as CloseRequest));
  }

  async list(filter: ConnectionFilter): Promise<Listing> {
    if (this.cluster === null) return { connections: this.listHere(filter), missing: [] };
    const { answers, missing } = await this.cluster.scatter<ConnectionView[]>(LIST, filter);
    const connections = [...answers.values()].flat().slice(0, filter.limit);
    return { connections, missing };
  }

  /** The connection, wherever it is, or null with the nodes that could not be asked. */
  get(id: string): Promise<{ view: ConnectionView | null; missing: string[] }> {
    return this.onItsNode(this.getHere(id), GET, id);
  }

  /** Closes it on its node; resolves with what it was, or null when no answering node holds it. */
  close(request: CloseRequest): Promise<{ view: ConnectionView | null; missing: string[] }> {
    return this.onItsNode(this.closeHere(request), CLOSE, request);
  }

  /** This node's answer when it holds the connection, else the answer of whichever node does. */
  private async onItsNode(
    here: ConnectionView | null,
    service: string,
    body: unknown,
  ): Promise<{ view: ConnectionView | null; missing: string[] }> {
    if (here !== null || this.cluster === null) return { view: here, missing: [] };
    const { answers, missing } = await this.cluster.scatter<ConnectionView | null>(service, body);
    const view = [...answers.values()].find((v) => v !== null) ?? null;
    return { view, missing };
  }

  private listHere(filter: ConnectionFilter): ConnectionView[] {
    const found: ConnectionView[] = [];
    for (const tracked of this.connections.all()) {
      if (filter.endpoint !== undefined && !onEndpoint(tracked, filter.endpoint)) continue;
      const v = this.view(tracked);
      if (filter.subprotocol !== undefined && v.subprotocol !== filter.subprotocol) continue;
      if (filter.principal !== undefined && v.principal !== filter.principal) continue;
      if (filter.address !== undefined && v.address !== filter.address) continue;
      found.push(v);
      if (found.length >= filter.limit) break;
    }
    return found;
  }

  private getHere(id: string): ConnectionView | null {
    const tracked = this.connections.get(id);
    return tracked === undefined ? null : this.view(tracked);
  }

  private closeHere(request: CloseRequest): ConnectionView | null {
    const tracked = this.connections.get(request.id);
    if (tracked === undefined) return null;
    const before = this.view(tracked);
    tracked.connection.close(request.code, request.reason);
    return before;
  }

  private view(c: TrackedConnection): ConnectionView {
    return {
      id: c.connection.id,
      node: this.cluster?.nodeId ?? null,
      endpoint: c.endpoint.path,
      subprotocol: c.module.options.name,
      principal: c.principal?.subject ?? null,
      address: c.remoteAddress,
      openedAt: new Date(c.openedAt).toISOString(),
      bytesIn: c.bytesIn,
      bytesOut: c.bytesOut,
    };
  }
}

/**
 * Whether a connection is on `endpoint`: the endpoint's pattern as configured (`/ocpp/:chargePointId`:
 * every charge point), or a path a client connects to (`/ocpp/CP1`: that charge point's connection).
 */
function onEndpoint(tracked: TrackedConnection, endpoint: string): boolean {
  if (tracked.endpoint.path === endpoint) return true;
  let params: Readonly<Record<string, string>> | null;
  try {
    params = tracked.endpoint.match(endpoint);
  } catch {
    // A path that does not decode names no connection.
    return false;
  }
  if (params === null) return false;
  const names = Object.keys(params);
  return (
    names.length === Object.keys(tracked.params).length &&
    names.every((name) => params[name] === tracked.params[name])
  );
}

import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { MqttServer } from '../mqtt-server.js';
import { sessionView, type MqttSessionView } from './session-view.js';

const GET = 'admin.mqtt.session';
const DISCARD = 'admin.mqtt.session.discard';

/**
 * Finds an MQTT session by client id, or discards it: on this node, or in cluster mode on whichever live
 * node holds it (each node answers for its own sessions; the one that has it connected is preferred to
 * one that kept a copy), with the nodes that did not answer in time.
 */
@Injectable()
export class SessionLookup implements OnModuleInit {
  constructor(
    private readonly server: MqttServer,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    this.cluster?.serve(GET, (clientId) => this.here(String(clientId)));
    this.cluster?.serve(DISCARD, (clientId) => this.server.broker.lifecycle.discard(String(clientId)));
  }

  async find(clientId: string): Promise<{ view: MqttSessionView | null; missing: string[] }> {
    const here = this.here(clientId);
    if (this.cluster === null || (here?.connection ?? null) !== null) return { view: here, missing: [] };
    const { answers, missing } = await this.cluster.scatter<MqttSessionView | null>(GET, clientId);
    const found = [...answers.values()].filter((v): v is MqttSessionView => v !== null);
    const view = found.find((v) => v.connection !== null) ?? found[0] ?? here;
    return { view, missing };
  }

  /** Ends the session wherever it is (every node asked, as a copy may linger); whether one was found. */
  async discard(clientId: string): Promise<{ found: boolean; missing: string[] }> {
    if (this.cluster === null) return { found: this.server.broker.lifecycle.discard(clientId), missing: [] };
    const { answers, missing } = await this.cluster.scatter<boolean>(DISCARD, clientId);
    return { found: [...answers.values()].some((found) => found), missing };
  }

  private here(clientId: string): MqttSessionView | null {
    const session = this.server.broker.sessions.get(clientId);
    return session === undefined ? null : sessionView(session, this.cluster?.nodeId ?? null);
  }
}

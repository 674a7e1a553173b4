import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { MqttClient } from '../mqtt-client.js';
import { MqttServer } from '../mqtt-server.js';
import { RC } from '../reason-codes.js';
import { sessionView, type MqttSessionView } from './session-view.js';

const GET = 'admin.mqtt.session';
const DISCARD = 'admin.mqtt.session.discard';
const KICK = 'admin.mqtt.session.kick';

/**
 * Finds an MQTT session by client id, closes its connection or discards it: on this node, or in cluster mode on whichever live
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
    this.cluster?.serve(GET, (clientId) => this.withStream(String(clientId)));
    this.cluster?.serve(DISCARD, (clientId) => this.discardHere(String(clientId)));
    this.cluster?.serve(KICK, (clientId) => this.kickHere(String(clientId)));
  }

  async find(clientId: string): Promise<{ view: MqttSessionView | null; missing: string[] }> {
    const here = await this.withStream(clientId);
    if (this.cluster === null || (here?.connection ?? null) !== null) return { view: here, missing: [] };
    const { answers, missing } = await this.cluster.scatter<MqttSessionView | null>(GET, clientId);
    const found = [...answers.values()].filter((v): v is MqttSessionView => v !== null);
    const view = found.find((v) => v.connection !== null) ?? found[0] ?? here;
    return { view, missing };
  }

  /**
   * Ends the session wherever it is (every node asked, as a copy may linger): the session as it was
   * (the connected one preferred), null when none was found.
   */
  async discard(clientId: string): Promise<{ view: MqttSessionView | null; missing: string[] }> {
    if (this.cluster === null) return { view: this.discardHere(clientId), missing: [] };
    const { answers, missing } = await this.cluster.scatter<MqttSessionView | null>(DISCARD, clientId);
    const found = [...answers.values()].filter((v): v is MqttSessionView => v !== null);
    return { view: found.find((v) => v.connection !== null) ?? found[0] ?? null, missing };
  }

  /**
   * Closes the session's connection wherever it is, over WebSocket or TCP (v5 clients hear DISCONNECT
   * 0x98 first); the session stays for its expiry and its will goes out as when a connection is lost.
   * The session as it was, null when no answering node has it connected.
   */
  async kick(clientId: string): Promise<{ view: MqttSessionView | null; missing: string[] }> {
    const here = this.kickHere(clientId);
    if (here !== null || this.cluster === null) return { view: here, missing: [] };
    const { answers, missing } = await this.cluster.scatter<MqttSessionView | null>(KICK, clientId);
    return { view: [...answers.values()].find((v) => v !== null) ?? null, missing };
  }

  private kickHere(clientId: string): MqttSessionView | null {
    const session = this.server.broker.sessions.get(clientId);
    if (session === undefined || !(session.owner instanceof MqttClient)) return null;
    const view = sessionView(session, this.cluster?.nodeId ?? null);
    session.owner.disconnect(RC.administrativeAction, 'connection closed by an administrator');
    return view;
  }

  private discardHere(clientId: string): MqttSessionView | null {
    const view = this.here(clientId);
    return view !== null && this.server.broker.lifecycle.discard(clientId) ? view : null;
  }

  private here(clientId: string): MqttSessionView | null {
    const session = this.server.broker.sessions.get(clientId);
    return session === undefined ? null : sessionView(session, this.cluster?.nodeId ?? null);
  }

  /** The session here with what the cluster's stream holds for it (asked of JetStream). */
  private async withStream(clientId: string): Promise<MqttSessionView | null> {
    const session = this.server.broker.sessions.get(clientId);
    if (session === undefined) return null;
    const stream = (await this.server.broker.queues?.waiting(session)) ?? null;
    // Read after the wait: the session's own counts as they are now.
    return { ...sessionView(session, this.cluster?.nodeId ?? null), stream };
  }
}

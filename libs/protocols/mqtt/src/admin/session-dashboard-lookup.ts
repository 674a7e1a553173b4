import { Injectable } from '@nestjs/common';
import {
  type DashboardLookup,
  type LookupAction,
  type LookupField,
  type LookupResult,
  type LookupView,
} from '#broker/gateway';
import { SessionLookup } from './session-lookup.js';
import { type MqttSessionView } from './session-view.js';

/** The subscriptions shown at most (the admin API's session route lists them all). */
const MAX_SUBSCRIPTIONS = 200;
/** Session Expiry Interval 0xFFFFFFFF: the session never expires (MQTT 5, 3.1.2.11.2). */
const NEVER_EXPIRES = 0xffffffff;

const VERSIONS: Readonly<Record<number, string>> = { 3: '3.1', 4: '3.1.1', 5: '5.0' };

/**
 * The dashboard's "MQTT session" lookup: a session by client id on whichever node holds it (the
 * admin API's SessionLookup), with closing its connection (kick: the session stays) while it has one,
 * and discarding it.
 */
@Injectable()
export class SessionDashboardLookup implements DashboardLookup {
  readonly id = 'mqtt-session';
  readonly title = 'MQTT session';
  readonly keyLabel = 'Client id';

  constructor(private readonly sessions: SessionLookup) {}

  async find(clientId: string): Promise<LookupResult> {
    const { view, missing } = await this.sessions.find(clientId);
    return view === null ? { found: false, missing } : { found: true, view: lookupView(view, missing) };
  }

  async act(clientId: string, actionId: string): Promise<'done' | 'not-found'> {
    const outcome =
      actionId === 'kick'
        ? await this.sessions.kick(clientId)
        : actionId === 'discard'
          ? await this.sessions.discard(clientId)
          : { view: null };
    return outcome.view === null ? 'not-found' : 'done';
  }
}

/** A session as the dashboard's lookup shows it. */
export function lookupView(session: MqttSessionView, missing: readonly string[]): LookupView {
  const { connection, will } = session;
  const fields: LookupField[] =
    connection === null
      ? [{ label: 'Connection', value: 'not connected' }]
      : [
          { label: 'Connection', value: connection.transport === 'ws' ? 'WebSocket' : 'TCP' },
          { label: 'Address', value: connection.remoteAddress },
          {
            label: 'Protocol version',
            value: VERSIONS[connection.protocolVersion] ?? String(connection.protocolVersion),
          },
          { label: 'Principal', value: connection.principal ?? 'anonymous' },
        ];
  fields.push(
    { label: 'Expiry', value: expiry(session.expirySec) },
    { label: 'Queued', value: String(session.queued) },
    { label: 'In flight', value: String(session.inflight) },
    ...(session.stream === null ? [] : [{ label: 'In the stream', value: String(session.stream) }]),
    { label: 'Awaiting release', value: String(session.awaitingRelease) },
    { label: 'Will', value: will === null ? 'none' : willText(will) },
  );
  const subscriptions = session.subscriptions.slice(0, MAX_SUBSCRIPTIONS);
  const total = session.subscriptions.length;
  const actions: LookupAction[] = [];
  if (connection !== null) {
    actions.push({
      id: 'kick',
      label: 'Close connection',
      confirm: `Close the connection of ${session.clientId}? Its session stays (its will, if any, is sent) and the client may come back to it.`,
    });
  }
  actions.push({
    id: 'discard',
    label: 'Discard session',
    confirm: `Discard the session of ${session.clientId}? Its subscriptions and queued messages are lost, its will is sent, and a connected client is disconnected.`,
  });
  return {
    heading: session.clientId,
    node: session.node,
    fields,
    tables: [
      {
        id: 'subscriptions',
        title:
          total > MAX_SUBSCRIPTIONS
            ? `Subscriptions (the first ${MAX_SUBSCRIPTIONS} of ${total})`
            : 'Subscriptions',
        columns: [
          { key: 'filter', label: 'Filter' },
          { key: 'qos', label: 'QoS', kind: 'count' },
        ],
        empty: 'No subscription.',
        rows: subscriptions.map((s) => ({ key: s.filter, cells: { filter: s.filter, qos: s.qos } })),
      },
    ],
    missing,
    actions,
  };
}

function expiry(seconds: number): string {
  if (seconds === 0) return 'ends with its connection';
  if (seconds >= NEVER_EXPIRES) return 'never';
  return `${seconds} s after its connection ends`;
}

function willText(will: NonNullable<MqttSessionView['will']>): string {
  const retain = will.retain ? ', retained' : '';
  const delay = will.delaySec > 0 ? `, after ${will.delaySec} s` : '';
  return `${will.topic} (QoS ${will.qos}${retain}${delay})`;
}

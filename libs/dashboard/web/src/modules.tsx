import type { Snapshot } from '../../src/snapshot.types.js';
import { formatCount, formatTime } from './format.js';

/** Module names as the broker reports them, and their figures in the order shown. */
const MODULES: readonly {
  readonly name: string;
  readonly title: string;
  readonly figures: Readonly<Record<string, string>>;
}[] = [
  {
    name: 'mqtt',
    title: 'MQTT',
    figures: {
      sessions: 'Sessions',
      connected: 'Connected',
      subscriptions: 'Subscriptions',
      retained: 'Retained messages',
      queued: 'Queued messages',
    },
  },
  {
    name: 'wamp.2.json',
    title: 'WAMP',
    figures: {
      realms: 'Realms',
      sessions: 'Sessions',
      registrations: 'Registrations',
      subscriptions: 'Subscriptions',
    },
  },
  { name: 'ocpp1.6', title: 'OCPP 1.6', figures: { chargePoints: 'Charge points connected' } },
];

function Figures(props: {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, number>>;
}) {
  return (
    <dl class="figures">
      {Object.entries(props.labels).map(([key, label]) => (
        <div key={key}>
          <dt>{label}</dt>
          <dd data-figure={`${props.id}.${key}`}>{formatCount(props.values[key])}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The protocol modules' live counts, the charge points, and the cluster's nodes. */
export function Modules(props: { readonly snapshot: Snapshot | undefined }) {
  const snapshot = props.snapshot;
  const present = MODULES.filter((m) => snapshot?.modules[m.name] !== undefined);
  return (
    <>
      <section aria-labelledby="modules-title" id="modules">
        <h2 id="modules-title">Modules</h2>
        <div class="cards">
          {present.map((m) => (
            <article key={m.name} class="card" aria-labelledby={`module-${m.name}`}>
              <h3 id={`module-${m.name}`}>{m.title}</h3>
              <Figures id={m.name} labels={m.figures} values={snapshot?.modules[m.name] ?? {}} />
            </article>
          ))}
        </div>
      </section>
      <section aria-labelledby="charge-points-title" id="charge-points">
        <h2 id="charge-points-title">Charge points</h2>
        <div class="scroll" tabIndex={0} role="region" aria-labelledby="charge-points-title">
          <table>
            <thead>
              <tr>
                <th scope="col">Identity</th>
                <th scope="col">Model</th>
                <th scope="col">Connectors</th>
                <th scope="col">Ongoing transactions</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {snapshot?.chargePoints.length === 0 && (
                <tr>
                  <td colSpan={5}>No charge point has connected yet.</td>
                </tr>
              )}
              {snapshot?.chargePoints.map((cp) => (
                <tr key={cp.identity} data-charge-point={cp.identity}>
                  <th scope="row">{cp.identity}</th>
                  <td>{[cp.vendor, cp.model].filter((v) => v !== null).join(' ') || '–'}</td>
                  <td>
                    {cp.connectors.map((c) => (
                      <span
                        key={c.id}
                        class={`status status-${c.status.toLowerCase()}`}
                        data-connector={c.id}
                      >
                        {c.id}: {c.status}
                        {c.errorCode !== 'NoError' && ` (${c.errorCode})`}
                      </span>
                    ))}
                  </td>
                  <td data-transactions>
                    {cp.transactions.length === 0
                      ? '–'
                      : cp.transactions
                          .map((t) => `#${t.id} on ${t.connectorId} since ${formatTime(t.startedAt)}`)
                          .join(', ')}
                  </td>
                  <td data-heartbeat>{formatTime(cp.lastHeartbeatAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      {snapshot?.nodes && (
        <section aria-labelledby="nodes-title" id="nodes">
          <h2 id="nodes-title">Cluster nodes</h2>
          <div class="scroll" tabIndex={0} role="region" aria-labelledby="nodes-title">
            <table>
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col" class="num">
                    Connections
                  </th>
                  <th scope="col" class="num">
                    MQTT sessions
                  </th>
                  <th scope="col" class="num">
                    WAMP sessions
                  </th>
                  <th scope="col" class="num">
                    Charge points
                  </th>
                </tr>
              </thead>
              <tbody>
                {snapshot.nodes.answered.map((n) => (
                  <tr key={n.node}>
                    <th scope="row">
                      {n.node}
                      {n.node === snapshot.node && ' (this one)'}
                    </th>
                    <td class="num">{formatCount(n.connections)}</td>
                    <td class="num">{formatCount(n.modules['mqtt']?.['sessions'])}</td>
                    <td class="num">{formatCount(n.modules['wamp.2.json']?.['sessions'])}</td>
                    <td class="num">{formatCount(n.modules['ocpp1.6']?.['chargePoints'])}</td>
                  </tr>
                ))}
                {snapshot.nodes.missing.map((node) => (
                  <tr key={node}>
                    <th scope="row">{node}</th>
                    <td colSpan={4}>did not answer in time</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}

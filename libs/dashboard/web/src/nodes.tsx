import type { NodeNats, NodeRow, NodeStore, Snapshot } from '../../src/snapshot.types.js';
import { formatAgo, formatCount, formatCpu, formatMiB, formatMs } from './format.js';

/** A node's NATS connection: its state, then the server, the last connect and its own heartbeat. */
function Nats(props: { readonly nats: NodeNats }) {
  const { nats } = props;
  if (nats.state === 'not clustered') return <span class="node-status">not clustered</span>;
  const { version, address } = nats.server;
  const server = [version === null ? null : `v${version}`, address].filter((part) => part !== null);
  return (
    <span class="node-status">
      <span class={`status status-${nats.state === 'connected' ? 'ok' : 'down'}`} data-nats-state>
        {nats.state}
      </span>
      {server.length > 0 && <span class="muted"> {server.join(' at ')}</span>}
      <br />
      <span class="muted">
        {nats.state === 'connected' ? 'connected' : 'last connected'} {formatAgo(nats.connectedAgoMs)} ago
      </span>
      {!nats.heartbeatConfirmed && (
        <>
          <br />
          <span class="status status-down" data-heartbeat="unconfirmed">
            heartbeat unconfirmed
          </span>
        </>
      )}
    </span>
  );
}

/** A node's store: its backend, whether its last check worked, and its last error. */
function Store(props: { readonly store: NodeStore | null }) {
  const { store } = props;
  if (store === null) return <span class="node-status">–</span>;
  const state = store.working === null ? 'not checked yet' : store.working ? 'working' : 'failing';
  const status = store.working === null ? 'unchecked' : store.working ? 'ok' : 'down';
  return (
    <span class="node-status">
      <span class={`status status-${status}`} data-store-state>
        {state}
      </span>
      {store.kind !== null && <span class="muted"> {store.kind}</span>}
      {store.lastError !== null && (
        <>
          <br />
          <span class={store.working === false ? 'error' : 'muted'} data-store-error>
            {store.working === false ? '' : 'last error '}
            {formatAgo(store.lastError.agoMs)} ago: {store.lastError.message}
          </span>
        </>
      )}
    </span>
  );
}

function rowName(row: NodeRow, here: string | null): string {
  if (row.node === null) return 'This node';
  return row.node === here ? `${row.node} (this one)` : row.node;
}

/**
 * Every node's connections, load, NATS connection and store, and each module's first count (this node
 * alone on a single broker). On a phone each row becomes a card, each figure under its column's name.
 */
export function Nodes(props: { readonly snapshot: Snapshot | undefined }) {
  const { snapshot } = props;
  if (snapshot === undefined) return null;
  // Each module's first count is its column.
  const headlines = Object.entries(snapshot.modules).flatMap(([name, card]) => {
    const [key, label] = Object.entries(card.labels)[0] ?? [];
    return key === undefined ? [] : [{ name, key, label: `${card.title} ${label?.toLowerCase()}` }];
  });
  const fixed = ['Connections', 'CPU', 'Memory', 'Loop delay p99', 'NATS', 'Store'];
  return (
    <section aria-labelledby="nodes-title" id="nodes">
      <h2 id="nodes-title">{snapshot.node === null ? 'This node' : 'Cluster nodes'}</h2>
      <div class="scroll" tabIndex={0} role="region" aria-labelledby="nodes-title">
        <table class="stack nodes">
          <thead>
            <tr>
              <th scope="col">Node</th>
              {fixed.map((label) => (
                <th key={label} scope="col" class={label === 'NATS' || label === 'Store' ? undefined : 'num'}>
                  {label}
                </th>
              ))}
              {headlines.map((h) => (
                <th key={h.name} scope="col" class="num">
                  {h.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {snapshot.nodes.answered.map((n) => (
              <tr key={n.node ?? ''} data-node-row={n.node ?? ''}>
                <th scope="row">{rowName(n, snapshot.node)}</th>
                <td class="num" data-label="Connections">
                  {formatCount(n.connections)}
                </td>
                <td class="num" data-label="CPU" data-load="cpu">
                  {formatCpu(n.load.cpu)}
                </td>
                <td class="num" data-label="Memory" data-load="memory">
                  {formatMiB(n.load.rssBytes)}
                </td>
                <td class="num" data-label="Loop delay p99" data-load="loop">
                  {formatMs(n.load.loopDelayP99Ms)}
                </td>
                <td data-label="NATS" data-nats={n.nats.state}>
                  <Nats nats={n.nats} />
                </td>
                <td data-label="Store" data-store={n.store === null ? 'none' : String(n.store.working)}>
                  <Store store={n.store} />
                </td>
                {headlines.map((h) => (
                  <td key={h.name} class="num" data-label={h.label}>
                    {formatCount(n.modules[h.name]?.[h.key])}
                  </td>
                ))}
              </tr>
            ))}
            {snapshot.nodes.missing.map((node) => (
              <tr key={node} data-node-row={node} data-missing>
                <th scope="row">{node}</th>
                <td colSpan={headlines.length + fixed.length}>did not answer in time</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

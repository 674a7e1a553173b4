import { useCallback, useState } from 'preact/hooks';
import type { ConnectionView } from '../../../admin/src/connection-view.js';
import type { Snapshot } from '../../src/snapshot.types.js';
import { api, query } from './api.js';
import { formatCount, formatTime } from './format.js';
import { useAdminList } from './use-admin.js';

const EMPTY = { endpoint: '', subprotocol: '', principal: '', address: '' };

/** The live connections (the first 100 matching the filters), each with a close button. */
export function Connections(props: { readonly snapshot: Snapshot | undefined }) {
  const [draft, setDraft] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const load = useCallback(
    () => api<ConnectionView[]>('GET', `connections${query({ ...filters, limit: '100' })}`),
    [filters],
  );
  const { rows, error, act } = useAdminList(load);
  const endpoints = props.snapshot?.endpoints ?? [];
  const subprotocols = [...new Set(props.snapshot?.connections.map((c) => c.subprotocol))].sort();
  // Closed ones leave the list at once: the listing that follows may still hold them while their
  // closing handshake runs.
  const [closedIds, setClosedIds] = useState<ReadonlySet<string>>(new Set());
  const close = (c: ConnectionView): Promise<void> =>
    act(async () => {
      const reason = 'closed from the dashboard';
      await api('DELETE', `connections/${encodeURIComponent(c.id)}${query({ code: '1000', reason })}`);
      setClosedIds((ids) => new Set([...ids, c.id]));
    });
  const shown = rows.filter((c) => !closedIds.has(c.id));
  // In cluster mode the list holds every node's connections: each row says whose it is.
  const clustered = (props.snapshot?.node ?? null) !== null;
  const here = props.snapshot?.node ?? null;
  const field = (name: keyof typeof EMPTY) => ({
    id: `filter-${name}`,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <section aria-labelledby="connections-title" id="connections">
      <h2 id="connections-title">Connections</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          // A new object each time: the listing loads again even when the filters stayed the same.
          setFilters({ ...draft });
        }}
      >
        <label for="filter-endpoint">Endpoint</label>
        <select {...field('endpoint')}>
          <option value="">any</option>
          {endpoints.map((e) => (
            <option key={e}>{e}</option>
          ))}
        </select>
        <label for="filter-subprotocol">Subprotocol</label>
        <select {...field('subprotocol')}>
          <option value="">any</option>
          {subprotocols.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <label for="filter-principal">Principal</label>
        <input {...field('principal')} />
        <label for="filter-address">Address</label>
        <input {...field('address')} />
        <button type="submit">Apply filters and refresh</button>
      </form>
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="scroll" tabIndex={0} role="region" aria-labelledby="connections-title">
        <table class="stack">
          <thead>
            <tr>
              {clustered && <th scope="col">Node</th>}
              <th scope="col">Endpoint</th>
              <th scope="col">Subprotocol</th>
              <th scope="col">Principal</th>
              <th scope="col">Address</th>
              <th scope="col">Opened</th>
              <th scope="col" class="num">
                Bytes in / out
              </th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.length === 0 && (
              <tr>
                <td colSpan={clustered ? 8 : 7}>No open connection matches.</td>
              </tr>
            )}
            {shown.map((c) => (
              <tr key={c.id} data-connection={c.id}>
                {clustered && (
                  <td data-node={c.node} data-label="Node">
                    {c.node}
                    {c.node === here && ' (this one)'}
                  </td>
                )}
                <td data-label="Endpoint">{c.endpoint}</td>
                <td data-label="Subprotocol">{c.subprotocol}</td>
                <td data-label="Principal">{c.principal ?? 'anonymous'}</td>
                <td data-label="Address">{c.address}</td>
                <td data-label="Opened">{formatTime(c.openedAt)}</td>
                <td class="num" data-label="Bytes in / out">
                  {formatCount(c.bytesIn)} / {formatCount(c.bytesOut)}
                </td>
                <td data-label="">
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Close connection ${c.id} (${c.subprotocol} on ${c.endpoint})`}
                    onClick={() => void close(c)}
                  >
                    Close
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

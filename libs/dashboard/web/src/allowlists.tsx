import { useCallback, useState } from 'preact/hooks';
import type { Snapshot } from '../../src/snapshot.types.js';
import { api } from './api.js';
import { formatTime } from './format.js';
import { useAdminList } from './use-admin.js';

interface OriginEntry {
  readonly id: string;
  readonly endpoint: string | null;
  readonly origin: string;
  readonly createdAt: string;
  readonly createdBy: string;
}

interface CredentialView {
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string | null;
  readonly status: 'active' | 'expired' | 'revoked';
}

/** The run-time origin allowlist: add an entry (for one endpoint or all), revoke one. */
export function Origins(props: { readonly snapshot: Snapshot | undefined }) {
  const load = useCallback(() => api<OriginEntry[]>('GET', 'origins'), []);
  const { rows, error, act } = useAdminList(load);
  const [origin, setOrigin] = useState('');
  const [endpoint, setEndpoint] = useState('');
  const endpoints = props.snapshot?.endpoints ?? [];
  return (
    <section aria-labelledby="origins-title" id="origins">
      <h2 id="origins-title">Origin allowlist</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            await api('POST', 'origins', { origin, endpoint: endpoint === '' ? null : endpoint });
            setOrigin('');
          });
        }}
      >
        <label for="origin-new">Origin</label>
        <input
          id="origin-new"
          required
          placeholder="https://app.example.com"
          value={origin}
          onInput={(e) => setOrigin(e.currentTarget.value)}
        />
        <label for="origin-endpoint">Endpoint</label>
        <select id="origin-endpoint" value={endpoint} onInput={(e) => setEndpoint(e.currentTarget.value)}>
          <option value="">every endpoint</option>
          {endpoints.map((e) => (
            <option key={e}>{e}</option>
          ))}
        </select>
        <button type="submit">Add origin</button>
      </form>
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul class="entries">
        {rows.map((o) => (
          <li key={o.id} data-origin={o.origin}>
            <span>
              <code>{o.origin}</code> on {o.endpoint ?? 'every endpoint'}, by {o.createdBy}
            </span>
            <button
              type="button"
              class="danger"
              aria-label={`Revoke origin ${o.origin}`}
              onClick={() => void act(() => api('DELETE', `origins/${encodeURIComponent(o.id)}`))}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** API tokens: create one (its secret is shown once, here), revoke any credential. */
export function Credentials() {
  const load = useCallback(() => api<CredentialView[]>('GET', 'credentials'), []);
  const { rows, error, act } = useAdminList(load);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  return (
    <section aria-labelledby="credentials-title" id="credentials">
      <h2 id="credentials-title">Credentials</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const list = scopes.split(/[\s,]+/).filter((s) => s !== '');
            const made = await api<{ token: string }>('POST', 'credentials/tokens', { name, scopes: list });
            setCreated({ name, token: made.token });
            setName('');
            setScopes('');
          });
        }}
      >
        <label for="credential-name">Token name</label>
        <input
          id="credential-name"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="credential-scopes">Scopes</label>
        <input
          id="credential-scopes"
          placeholder="endpoint:/chat bus:subscribe:sensors/#"
          value={scopes}
          onInput={(e) => setScopes(e.currentTarget.value)}
        />
        <button type="submit">Create token</button>
      </form>
      {created !== null && (
        <div class="secret" role="alert">
          <p>
            The token <strong>{created.name}</strong>, shown this once:
          </p>
          <code>{created.token}</code>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul class="entries">
        {rows.map((c) => (
          <li key={c.id} data-credential={c.name}>
            <span>
              <strong>{c.name}</strong> ({c.kind}, {c.status}
              {c.expiresAt !== null && `, expires ${formatTime(c.expiresAt)}`}) {c.scopes.join(' ')}
            </span>
            {c.status === 'active' && (
              <button
                type="button"
                class="danger"
                aria-label={`Revoke credential ${c.name}`}
                onClick={() => void act(() => api('DELETE', `credentials/${encodeURIComponent(c.id)}`))}
              >
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

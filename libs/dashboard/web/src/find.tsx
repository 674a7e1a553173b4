import { useEffect, useState } from 'preact/hooks';
import type {
  LookupAction,
  LookupInfo,
  LookupView,
} from '../../../gateway/src/observability/dashboard-lookups.js';
import { api, ApiError } from './api.js';
import { formatTime } from './format.js';
import { PanelTable } from './modules.js';

/** What was asked, and what the broker answered. */
type Answer =
  | { readonly kind: 'found'; readonly lookup: LookupInfo; readonly key: string; readonly view: LookupView }
  | { readonly kind: 'not-found'; readonly text: string };

const path = (id: string, key: string) => `lookups/${encodeURIComponent(id)}/${encodeURIComponent(key)}`;

/**
 * One thing found by its key through a module's lookup (GET /admin/v1/lookups): its fields, tables and
 * the actions it offers, each confirmed before it is done. What a lookup finds is the module's to say.
 */
export function Find(props: { readonly here: string | null }) {
  const [lookups, setLookups] = useState<readonly LookupInfo[] | null>(null);
  const [chosen, setChosen] = useState('');
  const [key, setKey] = useState('');
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api<LookupInfo[]>('GET', 'lookups')
      .then((all) => {
        setLookups(all);
        setChosen(all[0]?.id ?? '');
      })
      .catch((err: Error) => setError(err.message));
  }, []);

  const find = async (lookup: LookupInfo, wanted: string): Promise<void> => {
    setError(null);
    try {
      const view = await api<LookupView>('GET', path(lookup.id, wanted));
      setAnswer({ kind: 'found', lookup, key: wanted, view });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setAnswer({ kind: 'not-found', text: err.message });
      else setError((err as Error).message);
    }
  };

  const act = async (found: Extract<Answer, { kind: 'found' }>, action: LookupAction): Promise<void> => {
    if (!window.confirm(action.confirm)) return;
    setError(null);
    try {
      await api('POST', `${path(found.lookup.id, found.key)}/actions/${encodeURIComponent(action.id)}`);
      setDone(`${action.label}: done.`);
    } catch (err) {
      setError((err as Error).message);
    }
    // What it is now, whether the action went through or not.
    await find(found.lookup, found.key);
  };

  const lookup = lookups?.find((l) => l.id === chosen);
  return (
    <section aria-labelledby="find-title" id="find">
      <h2 id="find-title">Find</h2>
      {lookups !== null && lookups.length === 0 && <p>No module offers a lookup.</p>}
      {lookup !== undefined && (
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setDone(null);
            void find(lookup, key);
          }}
        >
          <label for="find-lookup">Look for</label>
          <select id="find-lookup" value={chosen} onInput={(e) => setChosen(e.currentTarget.value)}>
            {(lookups ?? []).map((l) => (
              <option key={l.id} value={l.id}>
                {l.title}
              </option>
            ))}
          </select>
          <label for="find-key">{lookup.keyLabel}</label>
          <input
            id="find-key"
            required
            maxLength={1024}
            autoComplete="off"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <button type="submit">Find</button>
        </form>
      )}
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {done !== null && (
        <p role="status" data-lookup-done>
          {done}
        </p>
      )}
      {answer?.kind === 'not-found' && (
        <p role="status" data-lookup-outcome="not-found">
          Not found: {answer.text}
        </p>
      )}
      {answer?.kind === 'found' && (
        <Found answer={answer} here={props.here} onAction={(action) => void act(answer, action)} />
      )}
    </section>
  );
}

function Found(props: {
  readonly answer: Extract<Answer, { kind: 'found' }>;
  readonly here: string | null;
  readonly onAction: (action: LookupAction) => void;
}) {
  const { lookup, view } = props.answer;
  return (
    <article class="card lookup-result" data-lookup={lookup.id} aria-labelledby="find-result-title">
      <h3 id="find-result-title">
        {lookup.title} <span class="found-key">{view.heading}</span>
      </h3>
      {view.missing.length > 0 && (
        <p role="alert" class="notice" data-missing={view.missing.join(' ')}>
          Nodes {view.missing.join(', ')} did not answer in time: what they hold is not in this answer.
        </p>
      )}
      <dl class="fields">
        {view.node !== null && (
          <div>
            <dt>Node</dt>
            <dd data-field="Node" data-node={view.node}>
              {view.node}
              {view.node === props.here && ' (this one)'}
            </dd>
          </div>
        )}
        {view.fields.map((f) => (
          <div key={f.label}>
            <dt>{f.label}</dt>
            <dd data-field={f.label}>{f.kind === 'time' ? formatTime(f.value) : (f.value ?? '–')}</dd>
          </div>
        ))}
      </dl>
      {view.tables.map((t) => (
        <div key={t.id} data-lookup-table={t.id}>
          <h4 id={`find-table-${t.id}`}>{t.title}</h4>
          <PanelTable labelledBy={`find-table-${t.id}`} columns={t.columns} empty={t.empty} rows={t.rows} />
        </div>
      ))}
      {view.actions.length > 0 && (
        <div class="actions">
          {view.actions.map((a) => (
            <button
              key={a.id}
              type="button"
              class="danger"
              data-action={a.id}
              onClick={() => props.onAction(a)}
            >
              {a.label}
            </button>
          ))}
        </div>
      )}
    </article>
  );
}

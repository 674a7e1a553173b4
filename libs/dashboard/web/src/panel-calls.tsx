import { useEffect, useState } from 'preact/hooks';
import type { PanelCallsInfo } from '../../../gateway/src/observability/panel-calls.js';
import { api, postRaw, type RawAnswer } from './api.js';

/** The most characters of JSON the editor takes (the admin API bounds the body anyway). */
const MAX_PAYLOAD_CHARS = 65_536;

/** The panels' calls (GET /admin/v1/dashboard/panel-calls), read once: they do not change while the broker runs. */
export function usePanelCalls(): { calls: readonly PanelCallsInfo[]; error: string | null } {
  const [calls, setCalls] = useState<readonly PanelCallsInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<PanelCallsInfo[]>('GET', 'dashboard/panel-calls')
      .then(setCalls)
      .catch((err: Error) => setError(`The panels' calls could not be read: ${err.message}`));
  }, []);
  return { calls, error };
}

/** A path segment, dots encoded too: a target of '..' must not climb out of the module's route. */
function segment(value: string): string {
  return encodeURIComponent(value).replaceAll('.', '%2E');
}

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

/** What the last call came to; `call` numbers the calls sent from the form (tests wait for the next one). */
type Outcome = { readonly call: number } & (
  { readonly kind: 'answer'; readonly answer: RawAnswer } | { readonly kind: 'failed'; readonly text: string }
);

/**
 * A call to one of a panel's rows, as the module declared it: the action and its JSON payload (starting
 * from the module's example) POSTed to the module's own admin route; the answer shown as it came.
 */
export function CallForm(props: { readonly calls: PanelCallsInfo; readonly targets: readonly string[] }) {
  const { panel, title, targetLabel, route, actions } = props.calls;
  const [target, setTarget] = useState('');
  const [action, setAction] = useState(actions[0]?.id ?? '');
  const [payload, setPayload] = useState(pretty(actions[0]?.example ?? {}));
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(0);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const id = (part: string) => `call-${panel}-${part}`;

  const send = async (): Promise<void> => {
    const call = sent + 1;
    setSent(call);
    // No answer on show while this one is awaited: it would read as this call's.
    setOutcome(null);
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch (err) {
      setOutcome({ call, kind: 'failed', text: `The payload is not JSON: ${(err as Error).message}` });
      return;
    }
    const path = route.replace('{target}', () => segment(target)).replace('{action}', () => segment(action));
    setBusy(true);
    try {
      setOutcome({ call, kind: 'answer', answer: await postRaw(path, body) });
    } catch (err) {
      setOutcome({ call, kind: 'failed', text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="call-form" data-call-form={panel} data-calls={sent}>
      <h3 id={id('title')}>{title}</h3>
      <form
        aria-labelledby={id('title')}
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label for={id('target')}>{targetLabel}</label>
        <input
          id={id('target')}
          required
          maxLength={1024}
          autoComplete="off"
          list={id('targets')}
          value={target}
          onInput={(e) => setTarget(e.currentTarget.value)}
        />
        <datalist id={id('targets')}>
          {props.targets.map((key) => (
            <option key={key} value={key} />
          ))}
        </datalist>
        <label for={id('action')}>Action</label>
        <select
          id={id('action')}
          value={action}
          onInput={(e) => {
            const chosen = e.currentTarget.value;
            setAction(chosen);
            setPayload(pretty(actions.find((a) => a.id === chosen)?.example ?? {}));
          }}
        >
          {actions.map((a) => (
            <option key={a.id} value={a.id}>
              {a.id}
            </option>
          ))}
        </select>
        <label for={id('payload')}>Payload (JSON)</label>
        <textarea
          id={id('payload')}
          rows={4}
          spellcheck={false}
          maxLength={MAX_PAYLOAD_CHARS}
          value={payload}
          onInput={(e) => setPayload(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      {outcome?.kind === 'failed' && (
        <p role="alert" class="error" data-call={outcome.call}>
          {outcome.text}
        </p>
      )}
      {outcome?.kind === 'answer' && <Answer call={outcome.call} answer={outcome.answer} />}
    </div>
  );
}

/** The route's answer: its status and title, and its body as JSON (a refusal's details included). */
function Answer(props: { readonly call: number; readonly answer: RawAnswer }) {
  const { status, title, body } = props.answer;
  const ok = status >= 200 && status < 300;
  return (
    <div
      class={ok ? 'call-answer' : 'call-answer error'}
      role={ok ? 'status' : 'alert'}
      data-call={props.call}
      data-call-status={status}
    >
      <p>
        <strong>{status}</strong> {title}
      </p>
      {body !== null && <pre data-call-body>{typeof body === 'string' ? body : pretty(body)}</pre>}
    </div>
  );
}

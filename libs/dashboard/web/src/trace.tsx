import { useEffect, useState } from 'preact/hooks';
import type {
  TraceKindInfo,
  TraceList,
  TraceSummary,
  TraceView,
} from '../../../admin/src/traces/trace-view.js';
import { api, download } from './api.js';
import { formatClock, formatTime } from './format.js';

/** The events a page shows at most: the newest; the download has them all. */
const SHOWN_EVENTS = 500;
/** How often a running trace is read again. */
const POLL_MS = 1000;
const DEFAULT_DURATION_SEC = 300;
const MAX_DURATION_SEC = 1800;

const tracePath = (id: string) => `traces/${encodeURIComponent(id)}`;

/**
 * Traces (GET /admin/v1/traces): what a module's trace kind follows (a client id, a topic filter), as
 * every node saw it. A shown trace is read again every second while it runs: a read gathers every
 * node's events, which the live feed (one node's figures) does not carry.
 */
export function Trace() {
  const [kinds, setKinds] = useState<readonly TraceKindInfo[] | null>(null);
  const [traces, setTraces] = useState<readonly TraceSummary[]>([]);
  const [kind, setKind] = useState('');
  const [key, setKey] = useState('');
  const [duration, setDuration] = useState(String(DEFAULT_DURATION_SEC));
  const [shown, setShown] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = async (): Promise<void> => {
    const list = await api<TraceList>('GET', 'traces');
    setKinds(list.kinds);
    setTraces(list.traces);
    setKind((chosen) => chosen || (list.kinds[0]?.id ?? ''));
  };

  useEffect(() => {
    refresh().catch((err: Error) => setError(err.message));
  }, []);

  const start = async (): Promise<void> => {
    setError(null);
    try {
      const trace = await api<TraceSummary>('POST', 'traces', { kind, key, durationSec: Number(duration) });
      setShown(trace.id);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const chosen = kinds?.find((k) => k.id === kind);
  return (
    <section aria-labelledby="trace-title" id="trace">
      <h2 id="trace-title">Trace</h2>
      {kinds !== null && kinds.length === 0 && <p>No module offers a trace.</p>}
      {chosen !== undefined && (
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            void start();
          }}
        >
          <label for="trace-kind">Follow</label>
          <select id="trace-kind" value={kind} onInput={(e) => setKind(e.currentTarget.value)}>
            {(kinds ?? []).map((k) => (
              <option key={k.id} value={k.id}>
                {k.title}
              </option>
            ))}
          </select>
          <label for="trace-key">{chosen.keyLabel} to trace</label>
          <input
            id="trace-key"
            required
            maxLength={1024}
            autoComplete="off"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <label for="trace-duration">For (s)</label>
          <input
            id="trace-duration"
            type="number"
            required
            min={1}
            max={MAX_DURATION_SEC}
            value={duration}
            onInput={(e) => setDuration(e.currentTarget.value)}
          />
          <button type="submit">Start</button>
        </form>
      )}
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {traces.length > 0 && (
        <ul class="entries" aria-label="Traces">
          {traces.map((t) => (
            <li key={t.id} data-trace={t.id}>
              <span>
                {t.key}{' '}
                <span class="muted">
                  ({t.kind}, {t.state})
                </span>
              </span>
              <button type="button" onClick={() => setShown(t.id)} aria-label={`Show the trace of ${t.key}`}>
                Show
              </button>
            </li>
          ))}
        </ul>
      )}
      {shown !== null && <Shown key={shown} id={shown} kinds={kinds ?? []} onChange={() => void refresh()} />}
    </section>
  );
}

/** One trace, read again every second while it runs, with Stop and Download (keyed by its id). */
function Shown(props: {
  readonly id: string;
  readonly kinds: readonly TraceKindInfo[];
  readonly onChange: () => void;
}) {
  const { id, onChange } = props;
  const [trace, setTrace] = useState<TraceView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const running = trace === null || trace.state === 'running';

  useEffect(() => {
    if (!running) return;
    let stopped = false;
    const read = (): void => {
      api<TraceView>('GET', `${tracePath(id)}?limit=${SHOWN_EVENTS}`)
        .then((view) => {
          if (stopped) return;
          setTrace(view);
          setError(null);
          if (view.state === 'ended') onChange();
        })
        .catch((err: Error) => !stopped && setError(err.message));
    };
    read();
    const timer = setInterval(read, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [id, running]);

  const stop = async (): Promise<void> => {
    try {
      await api('DELETE', tracePath(id));
      setTrace(await api<TraceView>('GET', `${tracePath(id)}?limit=${SHOWN_EVENTS}`));
      onChange();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const clustered = trace?.nodes.some((n) => n.node !== null) ?? false;
  const dropped = trace?.nodes.reduce((sum, n) => sum + n.dropped + n.overwritten, 0) ?? 0;
  return (
    <article class="card lookup-result" aria-labelledby="trace-shown-title" data-trace-shown={id}>
      <h3 id="trace-shown-title">
        {trace === null ? 'Trace' : `${props.kinds.find((k) => k.id === trace.kind)?.title ?? trace.kind} `}
        {trace !== null && <span class="found-key">{trace.key}</span>}
      </h3>
      {error !== null && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {trace !== null && (
        <>
          <p role="status" data-trace-state={trace.state}>
            {trace.state === 'running'
              ? `Running until ${formatTime(trace.endsAt)}, on ${trace.nodes.length} node(s).`
              : `Ended at ${formatTime(trace.endsAt)}.`}
            {dropped > 0 && ` ${dropped} event(s) not kept (rate limit or the most kept).`}
          </p>
          {trace.missing.length > 0 && (
            <p role="alert" class="notice" data-missing={trace.missing.join(' ')}>
              Nodes {trace.missing.join(', ')} did not answer in time: their events are not shown.
            </p>
          )}
          <div class="actions">
            {trace.state === 'running' && (
              <button type="button" class="danger" data-trace-stop onClick={() => void stop()}>
                Stop
              </button>
            )}
            <button
              type="button"
              data-trace-download
              onClick={() =>
                download(`${tracePath(id)}/download`, `trace-${id}.ndjson`).catch((err: Error) =>
                  setError(err.message),
                )
              }
            >
              Download (NDJSON)
            </button>
          </div>
          <h4 id="trace-events-title">
            Events{trace.events.length >= SHOWN_EVENTS ? ` (the newest ${SHOWN_EVENTS})` : ''}
          </h4>
          <div class="scroll" tabIndex={0} role="region" aria-labelledby="trace-events-title">
            <table class="stack trace-events" data-trace-events>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  {clustered && <th scope="col">Node</th>}
                  <th scope="col">Event</th>
                  <th scope="col">Client</th>
                  <th scope="col">Topic</th>
                  <th scope="col" class="num">
                    QoS
                  </th>
                  <th scope="col" class="num">
                    Bytes
                  </th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {trace.events.length === 0 && (
                  <tr>
                    <td colSpan={clustered ? 8 : 7}>Nothing yet.</td>
                  </tr>
                )}
                {trace.events.map((e, i) => (
                  <tr key={i} data-event={e.event} data-node={e.node ?? ''} data-topic={e.topic ?? ''}>
                    <td data-label="Time">{formatClock(e.time)}</td>
                    {clustered && <td data-label="Node">{e.node}</td>}
                    <td data-label="Event">{e.event}</td>
                    <td data-label="Client">{e.client ?? '–'}</td>
                    <td data-label="Topic">{e.topic ?? '–'}</td>
                    <td class="num" data-label="QoS">
                      {e.qos ?? '–'}
                    </td>
                    <td class="num" data-label="Bytes">
                      {e.bytes ?? '–'}
                    </td>
                    <td data-label="Outcome" data-outcome={e.outcome}>
                      {e.outcome}
                      {e.reason !== null && ` (${e.reason})`}
                      {e.packetId !== null && ` #${e.packetId}`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </article>
  );
}

import { useEffect, useState } from 'preact/hooks';
import type { Snapshot } from '../../src/snapshot.types.js';
import { AlarmBanner, Alarms } from './alarms.js';
import { Credentials, Origins } from './allowlists.js';
import { saveToken, savedToken } from './api.js';
import { Connections } from './connections.js';
import { type FeedState, openFeed } from './feed.js';
import { Find } from './find.js';
import { FeedStatus } from './feed-status.js';
import { appendSnapshot } from './history.js';
import { Modules } from './modules.js';
import { Nodes } from './nodes.js';
import { Overview } from './overview.js';
import { Publish } from './publish.js';
import { SignIn } from './sign-in.js';
import { Trace } from './trace.js';

/** The page's own sections, before and after the modules' panels (which the feed names). */
const BEFORE_PANELS = [
  ['overview', 'Overview'],
  ['refusals', 'Refusals'],
  ['alarms', 'Alarms'],
  ['modules', 'Modules'],
] as const;
const AFTER_PANELS = [
  ['find', 'Find'],
  ['trace', 'Trace'],
  ['connections', 'Connections'],
  ['publish', 'Publish'],
  ['origins', 'Origins'],
  ['credentials', 'Credentials'],
] as const;

/** The page: the feed's figures, or the sign-in form when the feed answers 401 or 403. */
export function App() {
  const [history, setHistory] = useState<Snapshot[]>([]);
  const [state, setState] = useState<FeedState>({ kind: 'connecting' });
  const [everLive, setEverLive] = useState(false);
  // Bumped by signing in or out: the feed opens again with the new credential.
  const [session, setSession] = useState(0);

  useEffect(
    () =>
      openFeed(
        (snapshot) => setHistory((h) => appendSnapshot(h, snapshot)),
        (next) => {
          setState(next);
          if (next.kind === 'live') setEverLive(true);
        },
      ),
    [session],
  );

  if (state.kind === 'refused') {
    return (
      <SignIn
        status={state.status}
        message={state.message}
        onToken={(token) => {
          saveToken(token);
          setSession((n) => n + 1);
        }}
      />
    );
  }
  const snapshot = history.at(-1);
  return (
    <>
      <a class="skip" href="#main">
        Skip to the figures
      </a>
      <header class="top">
        <h1>Broker dashboard{snapshot?.node ? ` · ${snapshot.node}` : ''}</h1>
        <FeedStatus state={state} everLive={everLive} />
        {savedToken() !== null && (
          <button
            type="button"
            onClick={() => {
              saveToken(null);
              setSession((n) => n + 1);
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <AlarmBanner snapshot={snapshot} />
      <nav aria-label="Sections">
        <ul>
          {[
            ...BEFORE_PANELS,
            ...(snapshot?.panels ?? []).map((panel) => [`panel-${panel.id}`, panel.title] as const),
            ...AFTER_PANELS,
            ['nodes', 'Nodes'],
          ].map(([id, label]) => (
            <li key={id}>
              <a href={`#${id}`}>{label}</a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Overview history={history} />
        <Alarms snapshot={snapshot} />
        <Modules snapshot={snapshot} />
        <Nodes snapshot={snapshot} />
        <Find here={snapshot?.node ?? null} />
        <Trace />
        <Connections snapshot={snapshot} />
        <Publish />
        <Origins snapshot={snapshot} />
        <Credentials />
      </main>
    </>
  );
}

import { useEffect, useState } from 'preact/hooks';
import type { FeedState } from './feed.js';

/** The feed's state in words, announced politely to screen readers; while lost, a countdown to the next try. */
export function FeedStatus(props: { readonly state: FeedState; readonly everLive: boolean }) {
  const [now, setNow] = useState(Date.now());
  const { state } = props;
  useEffect(() => {
    if (state.kind !== 'lost') return;
    const timer = window.setInterval(() => setNow(Date.now()), 500);
    return () => window.clearInterval(timer);
  }, [state]);
  const text =
    state.kind === 'live'
      ? 'Live'
      : state.kind === 'connecting'
        ? props.everLive
          ? 'Reconnecting…'
          : 'Connecting…'
        : state.kind === 'lost'
          ? `Feed lost (${state.reason}), reconnecting in ${Math.max(0, Math.ceil((state.retryAt - now) / 1000))} s`
          : state.message;
  return (
    <p class={`feed-status ${state.kind}`} role="status" aria-live="polite" data-state={state.kind}>
      <span class="dot" aria-hidden="true" />
      {text}
    </p>
  );
}

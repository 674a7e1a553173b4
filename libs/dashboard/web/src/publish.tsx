import { useState } from 'preact/hooks';
import { api } from './api.js';

/** A test message on the bus (POST /admin/v1/publish): every protocol's subscribers to its topic get it. */
export function Publish() {
  const [topic, setTopic] = useState('');
  const [payload, setPayload] = useState('');
  const [outcome, setOutcome] = useState<{ readonly text: string; readonly failed: boolean } | null>(null);
  return (
    <section aria-labelledby="publish-title" id="publish">
      <h2 id="publish-title">Publish a test message</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          api<{ reached: number }>('POST', 'publish', { topic, payload })
            .then(({ reached }) =>
              setOutcome({
                text: `Published to ${topic}: reached ${reached} subscriber(s) here.`,
                failed: false,
              }),
            )
            .catch((err: Error) => setOutcome({ text: err.message, failed: true }));
        }}
      >
        <label for="publish-topic">Topic</label>
        <input
          id="publish-topic"
          required
          placeholder="devices/test-1/cmd"
          value={topic}
          onInput={(e) => setTopic(e.currentTarget.value)}
        />
        <label for="publish-payload">Payload</label>
        <input id="publish-payload" value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
        <button type="submit">Publish</button>
      </form>
      {outcome !== null && (
        <p role={outcome.failed ? 'alert' : 'status'} class={outcome.failed ? 'error' : 'outcome'}>
          {outcome.text}
        </p>
      )}
    </section>
  );
}

import type { Snapshot } from '../../src/snapshot.types.js';
import { formatTime } from './format.js';

/** The alarms holding now, as a banner above the page. */
export function AlarmBanner(props: { readonly snapshot: Snapshot | undefined }) {
  const active = props.snapshot?.alarms.active ?? [];
  if (active.length === 0) return null;
  return (
    <div role="alert" class="alarm-banner">
      {active.map((a) => (
        <p key={a.name} data-alarm={a.name}>
          <strong>{a.title}</strong>
          {a.detail === null ? '' : ` (${a.detail})`} since {formatTime(a.since)}
        </p>
      ))}
    </div>
  );
}

/** The alarms holding now and the last ones cleared. */
export function Alarms(props: { readonly snapshot: Snapshot | undefined }) {
  const { active = [], cleared = [] } = props.snapshot?.alarms ?? {};
  const rows = [...active, ...cleared];
  return (
    <section aria-labelledby="alarms-title" id="alarms">
      <h2 id="alarms-title">Alarms</h2>
      <div class="scroll" tabIndex={0} role="region" aria-labelledby="alarms-title">
        <table>
          <thead>
            <tr>
              <th scope="col">Alarm</th>
              <th scope="col">Raised</th>
              <th scope="col">Cleared</th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colSpan={3}>None since the broker started.</td>
              </tr>
            )}
            {rows.map((a) => (
              <tr
                key={`${a.name}-${a.since}`}
                data-alarm-row={a.name}
                data-state={a.until === null ? 'active' : 'cleared'}
              >
                <td>
                  {a.title}
                  {a.detail === null ? '' : ` (${a.detail})`}
                </td>
                <td>{formatTime(a.since)}</td>
                <td>{a.until === null ? 'holds' : formatTime(a.until)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

import type { RefusalRow, Snapshot } from '../../src/snapshot.types.js';
import { TimeChart } from './chart.js';
import { formatCount, formatTime } from './format.js';
import { connectionSeries, handshakeSeries, latest, messageSeries } from './history.js';

/**
 * The latest refusals with identical ones (same status, endpoint and reason) as one row and a count, at
 * the time of the latest: a client retrying a refused handshake fills the list with one row, not many.
 */
function grouped(rows: readonly RefusalRow[]): { readonly row: RefusalRow; count: number }[] {
  const groups = new Map<string, { row: RefusalRow; count: number }>();
  for (const row of rows) {
    const key = JSON.stringify([row.status, row.endpoint, row.title, row.detail]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { row, count: 1 });
    else {
      group.count++;
      if (row.at > group.row.at) group.row = row;
    }
  }
  return [...groups.values()].sort((a, b) => b.row.at - a.row.at);
}

function Tile(props: { readonly label: string; readonly value: string; readonly id: string }) {
  return (
    <div class="tile">
      <dt id={`${props.id}-label`}>{props.label}</dt>
      <dd data-figure={props.id}>{props.value}</dd>
    </div>
  );
}

/** The figures at a glance, the three charts over the last five minutes, and the latest refusals. */
export function Overview(props: { readonly history: readonly Snapshot[] }) {
  const now = props.history.at(-1);
  const connections = connectionSeries(props.history);
  const handshakes = handshakeSeries(props.history);
  const messages = messageSeries(props.history);
  const open = now?.connections.reduce((sum, c) => sum + c.open, 0);
  const rate = [...latest(messages).values()].reduce<number>((sum, v) => sum + (v ?? 0), 0);
  return (
    <>
      <section aria-labelledby="overview-title" id="overview">
        <h2 id="overview-title">Overview</h2>
        <dl class="tiles">
          <Tile id="open" label="Open connections" value={formatCount(open)} />
          <Tile id="accepted" label="Handshakes accepted" value={formatCount(now?.handshakes['101'] ?? 0)} />
          <Tile id="refused" label="Handshakes refused" value={formatCount(now?.refusals.total)} />
          <Tile
            id="plain"
            label="Plain GETs (upgrade headers lost)"
            value={formatCount(now?.handshakes['plain'] ?? 0)}
          />
          <Tile
            id="rate"
            label="Messages per second"
            value={formatCount(now === undefined ? undefined : rate)}
          />
        </dl>
        <div class="charts">
          <TimeChart
            title="Open connections by endpoint and subprotocol"
            series={connections}
            unit="connections"
          />
          <TimeChart title="Handshake answers per second, by status" series={handshakes} unit="per second" />
          <TimeChart title="Messages per second, by module" series={messages} unit="per second" />
        </div>
        <div
          class="scroll"
          tabIndex={0}
          role="region"
          aria-label="Open connections by endpoint and subprotocol"
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Subprotocol</th>
                <th scope="col" class="num">
                  Open
                </th>
                <th scope="col" class="num">
                  Messages in
                </th>
                <th scope="col" class="num">
                  Messages out
                </th>
              </tr>
            </thead>
            <tbody>
              {now?.connections.map((c) => (
                <tr
                  key={`${c.endpoint} ${c.subprotocol}`}
                  data-endpoint={c.endpoint}
                  data-subprotocol={c.subprotocol}
                >
                  <td>{c.endpoint}</td>
                  <td>{c.subprotocol}</td>
                  <td class="num" data-figure="open">
                    {formatCount(c.open)}
                  </td>
                  <td class="num">{formatCount(c.messagesIn)}</td>
                  <td class="num">{formatCount(c.messagesOut)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="refusals-title" id="refusals">
        <h2 id="refusals-title">Latest refused handshakes</h2>
        <div class="scroll" tabIndex={0} role="region" aria-labelledby="refusals-title">
          <table>
            <thead>
              <tr>
                <th scope="col">Latest</th>
                <th scope="col" class="num">
                  Count
                </th>
                <th scope="col" class="num">
                  Status
                </th>
                <th scope="col">Endpoint</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {now?.refusals.latest.length === 0 && (
                <tr>
                  <td colSpan={5}>None since the broker started.</td>
                </tr>
              )}
              {grouped(now?.refusals.latest ?? []).map(({ row: r, count }, i) => (
                <tr key={`${r.at}-${i}`} class="refusal">
                  <td>{formatTime(r.at)}</td>
                  <td class="num" data-cell="count">
                    {formatCount(count)}
                  </td>
                  <td class="num">{r.status}</td>
                  <td>{r.endpoint ?? '–'}</td>
                  <td>
                    <strong>{r.title}</strong>: {r.detail}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}

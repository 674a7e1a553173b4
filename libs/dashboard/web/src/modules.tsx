import type { PanelCallsInfo } from '../../../gateway/src/observability/panel-calls.js';
import type { PanelCell, PanelColumn, PanelRow, PanelSnapshot, Snapshot } from '../../src/snapshot.types.js';
import { formatCount, formatTime } from './format.js';
import { CallForm, usePanelCalls } from './panel-calls.js';

function Figures(props: {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, number>>;
}) {
  return (
    <dl class="figures">
      {Object.entries(props.labels).map(([key, label]) => (
        <div key={key}>
          <dt>{label}</dt>
          <dd data-figure={`${props.id}.${key}`}>{formatCount(props.values[key])}</dd>
        </div>
      ))}
    </dl>
  );
}

function Cell(props: { readonly column: PanelColumn; readonly cell: PanelCell | undefined }) {
  const { column, cell } = props;
  if (cell === null || cell === undefined || cell === '') return <>–</>;
  if (typeof cell === 'number') return <>{formatCount(cell)}</>;
  if (typeof cell === 'string') return <>{column.kind === 'time' ? formatTime(cell) : cell}</>;
  return (
    <>
      {cell.map((chip) => (
        <span key={chip.key} class={`status status-${chip.status}`} data-chip={chip.key}>
          {chip.text}
        </span>
      ))}
    </>
  );
}

/**
 * A module's table, as it describes it (a panel's, a lookup's): the first column heads each row, and
 * the table scrolls inside its region rather than widen the page.
 */
export function PanelTable(props: {
  /** The id of the heading that names it. */
  readonly labelledBy: string;
  readonly columns: readonly PanelColumn[];
  readonly empty: string;
  readonly rows: readonly PanelRow[];
}) {
  const { labelledBy, columns, empty, rows } = props;
  const [head, ...rest] = columns;
  if (head === undefined) return null;
  return (
    <div class="scroll" tabIndex={0} role="region" aria-labelledby={labelledBy}>
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" class={c.kind === 'count' ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length}>{empty}</td>
            </tr>
          )}
          {rows.map((row) => (
            <tr key={row.key} data-row={row.key}>
              <th scope="row" data-cell={head.key}>
                <Cell column={head} cell={row.cells[head.key]} />
              </th>
              {rest.map((c) => (
                <td key={c.key} data-cell={c.key} class={c.kind === 'count' ? 'num' : undefined}>
                  <Cell column={c} cell={row.cells[c.key]} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A module's panel: its table under its title, and the form for the calls it offers its rows. */
function Panel(props: { readonly panel: PanelSnapshot; readonly calls: PanelCallsInfo | undefined }) {
  const { id, title, columns, empty, rows, missing } = props.panel;
  if (columns.length === 0) return null;
  return (
    <section aria-labelledby={`panel-${id}-title`} id={`panel-${id}`} data-panel={id}>
      <h2 id={`panel-${id}-title`}>{title}</h2>
      {missing.length > 0 && (
        <p role="alert" class="notice" data-missing={missing.join(' ')}>
          Nodes {missing.join(', ')} did not answer in time: what they count is not in this table.
        </p>
      )}
      <PanelTable labelledBy={`panel-${id}-title`} columns={columns} empty={empty} rows={rows} />
      {props.calls !== undefined && <CallForm calls={props.calls} targets={rows.map((r) => r.key)} />}
    </section>
  );
}

/** The modules' live counts and panels. */
export function Modules(props: { readonly snapshot: Snapshot | undefined }) {
  const snapshot = props.snapshot;
  const calls = usePanelCalls();
  const cards = Object.entries(snapshot?.modules ?? {});
  return (
    <>
      <section aria-labelledby="modules-title" id="modules">
        <h2 id="modules-title">Modules</h2>
        <div class="cards">
          {cards.map(([name, card]) => (
            <article key={name} class="card" aria-labelledby={`module-${name}`}>
              <h3 id={`module-${name}`}>{card.title}</h3>
              <Figures id={name} labels={card.labels} values={card.values} />
            </article>
          ))}
        </div>
      </section>
      {calls.error !== null && (
        <p role="alert" class="error">
          {calls.error}
        </p>
      )}
      {snapshot?.panels.map((panel) => (
        <Panel key={panel.id} panel={panel} calls={calls.calls.find((c) => c.panel === panel.id)} />
      ))}
    </>
  );
}

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Series } from './history.js';

/** Colours that read on both the light and the dark background. */
const PALETTE = ['#2f7ed8', '#d9534f', '#3a9d5d', '#c77c02', '#8e5cc4', '#1a9aa0', '#c2477f', '#6b7a8f'];
/** Past the palette, the colours come again with these dashes: no two series of a chart look alike. */
const DASHES: readonly (number[] | undefined)[] = [undefined, [8, 4], [2, 3], [10, 3, 2, 3]];

/**
 * Series `i`'s line. Each one a little thinner than the one before within a round of the palette, so a
 * series drawn over another with the same values leaves the first one's edges showing.
 */
function lineOf(i: number): { stroke: string; width: number; dash?: number[] } {
  const round = Math.floor(i / PALETTE.length);
  const stroke = PALETTE[i % PALETTE.length] as string;
  const width = 3.5 - 0.25 * (i % PALETTE.length);
  const dash = DASHES[round % DASHES.length];
  return dash === undefined ? { stroke, width } : { stroke, width, dash };
}
const HEIGHT = 200;

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/**
 * A time-series chart (uPlot). The plot is made once and then given new data; it is made anew only
 * when the set of series changes. Its size follows its box, whose height is fixed in CSS, so
 * nothing around it moves as values change.
 */
export function TimeChart(props: { readonly title: string; readonly series: Series; readonly unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { labels } = props.series;
  const key = labels.join('\n');

  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const axis = {
      stroke: cssVar('--muted'),
      grid: { stroke: cssVar('--grid') },
      ticks: { stroke: cssVar('--grid') },
    };
    const made = new uPlot(
      {
        width: element.clientWidth,
        height: HEIGHT,
        legend: {
          show: true,
          live: false,
          // The legend's swatch as the line is drawn: dashed where the line is.
          markers: { dash: (u, i) => (u.series[i]?.dash === undefined ? 'solid' : 'dashed') },
        },
        cursor: { show: true, drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [axis, { ...axis, size: 56, label: props.unit, labelSize: 16 }],
        series: [{}, ...labels.map((label, i) => ({ label, ...lineOf(i), points: { show: false } }))],
      },
      [props.series.x, ...props.series.ys] as uPlot.AlignedData,
      element,
    );
    plot.current = made;
    const resize = new ResizeObserver(() => made.setSize({ width: element.clientWidth, height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      plot.current = null;
    };
  }, [key]);

  useEffect(() => {
    plot.current?.setData([props.series.x, ...props.series.ys] as uPlot.AlignedData);
  }, [props.series]);

  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div
        ref={box}
        class="plot"
        role="img"
        aria-label={`${props.title}: ${labels.join(', ') || 'no data yet'}`}
      />
    </figure>
  );
}

/**
 * Small charts as inline SVG, no library: a stacked bar of a batch's items, bars per day, and a
 * line over time. Each is a `figure` whose SVG is one image with a text alternative
 * (`role="img"`, `aria-label`), and whose figures are also a table for screen readers.
 */
import type { ComponentChildren } from 'preact';

export interface Segment {
  label: string;
  value: number;
  /** The swatch class: s-ok, s-bad, s-cancel, s-run, s-wait, s-units. */
  swatch: string;
}

/** Parts of a whole as one bar (a batch's items by where they stand), with its legend. */
export function StackedBar({ segments, label }: { segments: Segment[]; label: string }) {
  const total = segments.reduce((sum, segment) => sum + segment.value, 0);
  const text = segments.map((segment) => `${segment.label} ${segment.value}`).join(', ');
  return (
    <div>
      <div class="stack" role="img" aria-label={`${label}: ${text}`}>
        {segments
          .filter((segment) => segment.value > 0)
          .map((segment) => (
            <span
              class={segment.swatch}
              style={{ width: `${(100 * segment.value) / Math.max(1, total)}%` }}
              title={`${segment.label}: ${segment.value}`}
            />
          ))}
      </div>
      <ul class="legend" aria-hidden="true">
        {segments.map((segment) => (
          <li class={segment.swatch}>
            {segment.label} {segment.value.toLocaleString()}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Round steps for an axis from 0 to at least `max`: about four of 1, 2 or 5 times a power of ten. */
export function niceMax(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 1 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw) ?? 10 * power;
  return { top: Math.ceil(max / step) * step, step };
}

const W = 560;
const H = 200;
const M = { top: 12, right: 8, bottom: 28, left: 44 };
const plotW = W - M.left - M.right;
const plotH = H - M.top - M.bottom;

function YAxis({ top, step, format }: { top: number; step: number; format: (value: number) => string }) {
  const ticks: number[] = [];
  for (let value = 0; value <= top + step / 2; value += step) ticks.push(value);
  return (
    <g>
      {ticks.map((value) => {
        const y = M.top + plotH - (value / top) * plotH;
        return (
          <g>
            <line class="grid" x1={M.left} x2={W - M.right} y1={y} y2={y} />
            <text x={M.left - 6} y={y + 4} text-anchor="end">
              {format(value)}
            </text>
          </g>
        );
      })}
    </g>
  );
}

/** The figures of a chart as a table, for screen readers (the SVG is one image to them). */
function DataTable(props: { caption: string; columns: string[]; rows: (string | number)[][] }) {
  return (
    <table class="visually-hidden">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th scope="col">{column}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            {row.map((cell) => (
              <td>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export interface BarGroup {
  label: string;
  /** One value per series, stacked in order. */
  values: number[];
}

/** Bars per period (a day), stacked by series (succeeded, failed...), with a legend. */
export function BarChart(props: {
  title: string;
  series: { label: string; swatch: string }[];
  groups: BarGroup[];
  format?: (value: number) => string;
  children?: ComponentChildren;
}) {
  const { title, series, groups } = props;
  const format = props.format ?? ((value: number) => value.toLocaleString());
  const totals = groups.map((group) => group.values.reduce((sum, value) => sum + value, 0));
  const { top, step } = niceMax(Math.max(0, ...totals));
  const slot = plotW / Math.max(1, groups.length);
  const barW = Math.max(4, Math.min(36, slot * 0.7));
  const labelEvery = Math.ceil(groups.length / 10);
  const summary = groups.map((group, index) => `${group.label}: ${format(totals[index]!)}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}. ${summary}`}>
        <YAxis top={top} step={step} format={format} />
        {groups.map((group, index) => {
          const x = M.left + slot * index + (slot - barW) / 2;
          let y = M.top + plotH;
          return (
            <g>
              {group.values.map((value, which) => {
                const h = (value / top) * plotH;
                y -= h;
                return value > 0 ? (
                  <rect
                    class={series[which]?.swatch}
                    x={x}
                    y={y}
                    width={barW}
                    height={h}
                    rx={2}
                    style={{ fill: 'var(--swatch)' }}
                  >
                    <title>{`${group.label}, ${series[which]?.label}: ${format(value)}`}</title>
                  </rect>
                ) : null;
              })}
              {(groups.length - 1 - index) % labelEvery === 0 ? (
                <text x={x + barW / 2} y={H - 8} text-anchor="middle">
                  {group.label}
                </text>
              ) : null}
            </g>
          );
        })}
        <line class="axis" x1={M.left} x2={W - M.right} y1={M.top + plotH} y2={M.top + plotH} />
      </svg>
      {series.length > 1 ? (
        <ul class="legend" aria-hidden="true">
          {series.map((entry) => (
            <li class={entry.swatch}>{entry.label}</li>
          ))}
        </ul>
      ) : null}
      <DataTable
        caption={title}
        columns={['Period', ...series.map((entry) => entry.label)]}
        rows={groups.map((group) => [group.label, ...group.values.map(format)])}
      />
      {props.children}
    </figure>
  );
}

/** A count growing over time (a batch's finished items), from the first point to now. */
export function LineChart(props: {
  title: string;
  points: { at: number; value: number }[];
  max: number;
  formatTime: (at: number) => string;
}) {
  const { title, points, max } = props;
  if (points.length === 0) return null;
  const start = points[0]!.at;
  const end = Math.max(points[points.length - 1]!.at, start + 1);
  const { top, step } = niceMax(Math.max(max, 1));
  const x = (at: number) => M.left + ((at - start) / (end - start)) * plotW;
  const y = (value: number) => M.top + plotH - (value / top) * plotH;
  // Steps, not slopes: the count holds until the next item finishes, so an idle gap draws flat.
  const path = points
    .map((point, index) =>
      index === 0
        ? `M${x(point.at).toFixed(1)},${y(point.value).toFixed(1)}`
        : `H${x(point.at).toFixed(1)} V${y(point.value).toFixed(1)}`,
    )
    .join(' ');
  const last = points[points.length - 1]!;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${title}: ${last.value} of ${max} by ${props.formatTime(last.at)}, from ${props.formatTime(start)}`}
      >
        <YAxis top={top} step={step} format={(value) => value.toLocaleString()} />
        <line
          class="grid"
          x1={M.left}
          x2={W - M.right}
          y1={y(max)}
          y2={y(max)}
          style={{ strokeDasharray: '4 3', stroke: 'var(--c-cancel)' }}
        />
        <path
          d={`${path} L${x(last.at).toFixed(1)},${y(0)} L${x(start)},${y(0)} Z`}
          style={{ fill: 'var(--c-ok)', opacity: 0.12 }}
        />
        <path d={path} style={{ fill: 'none', stroke: 'var(--c-ok)', strokeWidth: 2 }} />
        <text x={M.left} y={H - 8}>
          {props.formatTime(start)}
        </text>
        <text x={W - M.right} y={H - 8} text-anchor="end">
          {props.formatTime(last.at)}
        </text>
        <line class="axis" x1={M.left} x2={W - M.right} y1={M.top + plotH} y2={M.top + plotH} />
      </svg>
    </figure>
  );
}

/**
 * A line chart of a count over time as inline SVG, readable without JavaScript or CSS: a title,
 * labelled axes with ticks, every point's value (all of them when there are few, else the first,
 * the last, the lowest and the highest), a tooltip per point (`<title>`), and a description a
 * screen reader reads (`role="img"`, `aria-labelledby` the title and the description).
 */
import { createHash } from 'node:crypto';

export interface ChartPoint {
  /** Epoch milliseconds. */
  at: number;
  value: number;
}

// Narrow in its own units, so its text stays legible when a phone scales it down (about 0.7 at 390 px).
const width = 520;
const height = 320;
const margin = { top: 48, right: 32, bottom: 56, left: 84 };
const plotWidth = width - margin.left - margin.right;
const plotHeight = height - margin.top - margin.bottom;
/** Up to this many points, every point's value is written beside it. */
const labelAllUpTo = 12;

const escapeXml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
const number = (value: number) => value.toLocaleString('en-US');
const round = (value: number) => Math.round(value * 10) / 10;

/** Round tick values covering `[min, max]` (about five steps of 1, 2 or 5 times a power of ten). */
export function niceTicks(min: number, max: number, steps = 5): number[] {
  if (min === max) {
    const pad = Math.max(1, Math.abs(min) * 0.05);
    return niceTicks(Math.max(0, min - pad), max + pad, steps);
  }
  const raw = (max - min) / steps;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const ticks: number[] = [];
  for (let tick = Math.floor(min / step) * step; tick <= max + step * 1e-9; tick += step)
    ticks.push(Math.round(tick / step) * step);
  if (ticks.at(-1)! < max) ticks.push(ticks.at(-1)! + step);
  return ticks;
}

function timeLabel(at: number, sameDay: boolean, sameYear: boolean, withTime: boolean): string {
  const iso = new Date(at).toISOString();
  if (sameDay) return `${iso.slice(11, 16)}`;
  const date = sameYear ? iso.slice(5, 10) : iso.slice(0, 10);
  return withTime ? `${date} ${iso.slice(11, 16)}` : date;
}

/** The chart as an SVG element inside a `<figure>` with a caption. */
export function countSeriesChart(options: { title: string; points: ChartPoint[]; unit?: string }): string {
  const unit = options.unit ?? 'patents';
  const points = [...options.points].sort((a, b) => a.at - b.at);
  const id = `chart-${createHash('sha256')
    .update(`${options.title}${points.map((p) => `${p.at}:${p.value}`).join(',')}`)
    .digest('hex')
    .slice(0, 10)}`;
  const description = describeSeries(points, unit);
  if (points.length === 0) {
    return `<figure class="count-chart"><figcaption>${escapeXml(options.title)}: no counts yet.</figcaption></figure>`;
  }
  const values = points.map((point) => point.value);
  const ticks = niceTicks(Math.min(...values), Math.max(...values));
  const low = ticks[0]!;
  const high = ticks.at(-1)!;
  const first = points[0]!.at;
  const last = points.at(-1)!.at;
  // Runs evenly spaced in order (triggered and backfilled runs are not evenly spaced in time).
  const indexOf = new Map(points.map((point, index) => [point, index]));
  const x = (point: ChartPoint) =>
    round(
      margin.left +
        (points.length === 1 ? plotWidth / 2 : ((indexOf.get(point) ?? 0) / (points.length - 1)) * plotWidth),
    );
  const y = (value: number) =>
    round(margin.top + plotHeight - ((value - low) / (high - low || 1)) * plotHeight);
  const days = new Set(points.map((point) => new Date(point.at).toISOString().slice(0, 10)));
  const sameDay = days.size === 1;
  const withTime = !sameDay && days.size < points.length;
  const sameYear = new Date(first).getUTCFullYear() === new Date(last).getUTCFullYear();

  const grid = ticks
    .map(
      (tick) =>
        `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e2e2e2"/>` +
        `<text x="${margin.left - 8}" y="${y(tick) + 4}" text-anchor="end">${escapeXml(number(tick))}</text>`,
    )
    .join('\n');

  // Time ticks: at most 4 with times, 7 without, at points (the runs), first and last always.
  const tickEvery = Math.max(1, Math.ceil(points.length / (withTime ? 3 : 6)));
  const timeTicks = points.filter((_, index) => index % tickEvery === 0);
  const lastPoint = points.at(-1)!;
  if (timeTicks.at(-1) !== lastPoint) {
    // The last run always has its label; a label too close before it gives way.
    if (timeTicks.length > 1 && x(lastPoint) - x(timeTicks.at(-1)!) < (withTime ? 100 : 60)) timeTicks.pop();
    timeTicks.push(lastPoint);
  }
  const xAxis = timeTicks
    .map(
      (point) =>
        `<line x1="${x(point)}" x2="${x(point)}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight + 5}" stroke="#555"/>` +
        `<text x="${x(point)}" y="${margin.top + plotHeight + 20}" text-anchor="${points.length === 1 ? 'middle' : point === points[0] ? 'start' : point === lastPoint ? 'end' : 'middle'}">${escapeXml(timeLabel(point.at, sameDay, sameYear, withTime))}</text>`,
    )
    .join('\n');

  const labelled = new Set<number>();
  // Every value is written when the runs are far enough apart for its label (about 60 units).
  if (points.length <= labelAllUpTo && (points.length < 2 || plotWidth / (points.length - 1) >= 60)) {
    for (let index = 0; index < points.length; index++) labelled.add(index);
  } else {
    labelled.add(0);
    labelled.add(points.length - 1);
    labelled.add(values.indexOf(Math.min(...values)));
    labelled.add(values.indexOf(Math.max(...values)));
  }
  const line =
    points.length > 1
      ? `<polyline fill="none" stroke="#0645ad" stroke-width="2" points="${points.map((p) => `${x(p)},${y(p.value)}`).join(' ')}"/>`
      : '';
  const marks = points
    .map((point, index) => {
      const when = new Date(point.at).toISOString().slice(0, 16).replace('T', ' ');
      // The first and last values are written inward, clear of the count axis and the edge.
      const anchor =
        points.length === 1
          ? 'middle'
          : index === 0
            ? 'start'
            : index === points.length - 1
              ? 'end'
              : 'middle';
      const label = labelled.has(index)
        ? `<text x="${x(point)}" y="${y(point.value) - 9}" text-anchor="${anchor}" font-weight="600">${escapeXml(number(point.value))}</text>`
        : '';
      return `<g><circle cx="${x(point)}" cy="${y(point.value)}" r="4" fill="#0645ad"><title>${escapeXml(`${when} UTC: ${number(point.value)} ${unit}`)}</title></circle>${label}</g>`;
    })
    .join('\n');

  const timeSpan = sameDay
    ? `time (UTC), ${new Date(first).toISOString().slice(0, 10)}`
    : sameYear
      ? `date (UTC), ${new Date(first).getUTCFullYear()}`
      : 'date (UTC)';
  return `<figure class="count-chart" style="margin:1rem 0">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" style="max-width:720px;height:auto" role="img" aria-labelledby="${id}-title ${id}-desc" font-family="system-ui, sans-serif" font-size="13" fill="#1a1a1a">
<title id="${id}-title">${escapeXml(options.title)}</title>
<desc id="${id}-desc">${escapeXml(description)}</desc>
<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>
<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="600">${escapeXml(options.title)}</text>
${grid}
<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#555"/>
<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight}" stroke="#555"/>
${xAxis}
<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">${escapeXml(`Run, ${timeSpan}`)}</text>
<text transform="translate(18 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(`Count (${unit})`)}</text>
${line}
${marks}
</svg>
<figcaption>${escapeXml(description)}</figcaption>
</figure>`;
}

/** The series in words: the chart's description and caption. */
export function describeSeries(points: ChartPoint[], unit = 'patents'): string {
  if (points.length === 0) return 'No counts yet.';
  const when = (at: number) => `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const first = points[0]!;
  const last = points.at(-1)!;
  if (points.length === 1) return `One run so far: ${number(last.value)} ${unit} on ${when(last.at)}.`;
  const values = points.map((point) => point.value);
  const previous = points.at(-2)!;
  const delta = last.value - previous.value;
  const change = delta === 0 ? 'no change' : `${delta > 0 ? 'up' : 'down'} ${number(Math.abs(delta))}`;
  return (
    `${points.length} runs from ${when(first.at)} to ${when(last.at)}: ${number(first.value)} ${unit} at first, ` +
    `${number(last.value)} at the latest run (${change} since the run before, ${number(previous.value)}); ` +
    `lowest ${number(Math.min(...values))}, highest ${number(Math.max(...values))}.`
  );
}

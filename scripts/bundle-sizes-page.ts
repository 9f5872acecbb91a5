/**
 * The figures of bench/bundle-sizes.md, written from a run of scripts/bundle-sizes.ts
 * (`npm run bundle-sizes -- --page`): the block between the page's `<!-- figures -->` and
 * `<!-- /figures -->` lines is replaced by the run's date, build, Node version, rounds and load, and
 * one row per baseline and function (size at start, gzip, budget, cold-import CPU and its ratio to
 * an empty handler). The prose around it is kept as written.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';

export const PAGE = 'bench/bundle-sizes.md';
const START = '<!-- figures -->';
const END = '<!-- /figures -->';

export interface PageRun {
  reports: { name: string; startBytes: number; gzipBytes: number }[];
  /** Label → bytes of each measured baseline (the empty handler apart). */
  baselines: Record<string, number>;
  budgets: Partial<Record<string, number>>;
  cold?: { emptyCpuMs: number; cpuMedians: Record<string, number>; loads: number[] };
  rounds: number;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The figures block for `run`, built at `date` from `build` (a short commit id). */
export function figuresBlock(run: PageRun, date: Date, build: string): string {
  const { cold } = run;
  const cpu = (name: string) => {
    const ms = cold?.cpuMedians[name];
    return ms === undefined || !cold ? ['', ''] : [ms.toFixed(0), (ms / cold.emptyCpuMs).toFixed(1)];
  };
  const load = cold
    ? `load average ${Math.min(...cold.loads).toFixed(1)} to ${Math.max(...cold.loads).toFixed(1)} on ${cpus().length} shared cores`
    : 'no cold imports (`--no-cold`)';
  const node = `Node ${process.versions.node.split('.').slice(0, 2).join('.')}`;
  const rows = [
    `| (empty handler) | | | | ${cold ? cold.emptyCpuMs.toFixed(0) : ''} | ${cold ? '1.0' : ''} |`,
    ...Object.entries(run.baselines).map(
      ([label, bytes]) =>
        `| ${label.replace(/^\((.*)\)$/, '$1')} | ${kib(bytes)} | | | ${cpu(label).join(' | ')} |`,
    ),
    ...run.reports.map(
      (r) =>
        `| ${r.name} | ${kib(r.startBytes)} | ${kib(r.gzipBytes)} | ${run.budgets[r.name] ?? ''} | ${cpu(r.name).join(' | ')} |`,
    ),
  ];
  return [
    START,
    `Figures of ${date.toISOString().slice(0, 10)} (build ${build}, ${node}, ${run.rounds} rounds, ${load}; written by \`npm run bundle-sizes -- --page\`):`,
    '',
    `| | loaded at start | gzip | budget (KiB) | ${node}: CPU ms | × empty |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    END,
  ].join('\n');
}

/** `page` with its figures block replaced by `block`; throws when the page has no block. */
export function withFigures(page: string, block: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${PAGE} has no ${START} ... ${END} block`);
  return page.slice(0, start) + block + page.slice(end + END.length);
}

/** Writes the figures of `run` into the page under `root`. */
export function writeFiguresPage(root: string, run: PageRun): void {
  const file = path.join(root, PAGE);
  let build = 'unknown';
  try {
    build = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {}
  writeFileSync(file, withFigures(readFileSync(file, 'utf8'), figuresBlock(run, new Date(), build)));
}

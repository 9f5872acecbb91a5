/**
 * What the benches that run novelty checks against the built-in sandbox share (bench/throughput.ts,
 * bench/fairness.ts): the local runtime as `opflow run` builds it (SQLite file, report folder, HTTP
 * client, limiter, worker pool) with the sandbox in the same process, on the virtual clock or the
 * wall clock; the checks' input; the sandbox's own task times; and the printed tables.
 */
import { join } from 'node:path';
import { silentLogger, submitJob, type WorkflowRegistry } from '../shared/engine';
import { createLocalPipeline, type LocalPipeline } from '../shared/runtime/local/pipeline';
import { ManualClock, skippingTime } from '../shared/runtime/time';
import { SANDBOX_API_KEY, type SandboxKey, type TaskDuration } from '../shared/sandbox';
import { SeededRandom } from '../shared/sandbox/seeded';
import { workflows } from '../shared/workflows';

/** Task times at the sandbox: 1 to 3 s, most near 1 s. */
export const taskDuration: TaskDuration = { meanMs: 2_000, spreadMs: 1_000, shape: 'skewed' };

/** The text of the i-th novelty check (each different, so no two share an answer). */
export const noveltyText = (i: number) =>
  [
    `Electrodynamic dust shield in the anti-reflective coating of solar module ${i + 1}.`,
    'Transparent interdigitated electrodes inside the coating are driven by a three-phase high-voltage signal.',
    'The travelling electric field lifts charged dust particles and moves them to the lower edge of the module.',
    'A soiling sensor under a clear cover starts a thirty-second cleaning cycle when the loss exceeds two percent.',
  ].join(' ');

/** Submits the i-th novelty check (with any other fields of the submission: tenant, priority, ...). */
export async function submitCheck(
  pipeline: LocalPipeline,
  i: number,
  extra: Record<string, unknown> = {},
): ReturnType<typeof submitJob> {
  return submitJob(pipeline.deps, {
    workflow: 'novelty-check',
    input: { text: noveltyText(i), title: `Dust shield ${i + 1}` },
    ...extra,
  });
}

export interface BenchPipelineOptions {
  /** Where the case keeps its database and reports. */
  dir: string;
  /** opflow's --qps. */
  qps: number;
  /** A virtual clock (stands still while steps run, jumps when every worker is idle) or the wall clock. */
  virtual: boolean;
  /** How many times faster than declared the sandbox's tasks run (10: about right for 1-3 s tasks). */
  sandboxSpeed: number;
  /** The sandbox's key (default: the sandbox's key limited to `qps` on a sliding window). */
  key?: SandboxKey | undefined;
  /** The sandbox's seed (ids and task durations); undefined: its own. */
  seed?: number | undefined;
  /** Every task's time at the sandbox (default: `taskDuration`). */
  taskTime?: TaskDuration | undefined;
  workflows?: WorkflowRegistry | undefined;
  env?: Record<string, string> | undefined;
  /** False: no scheduler rounds (no re-aims or pulls). */
  fill?: boolean | undefined;
  /**
   * The engine's random numbers (spreads, jitter) and the virtual clock's start: with a seed, a
   * run on the virtual clock does the same as another of the same seed (default: Math.random, now).
   */
  engineSeed?: number | undefined;
  /** The sandbox keeps each call's request body in its ledger entry (tells a call's job). */
  ledgerBodies?: boolean | undefined;
}

/** The virtual clock's start for a seeded run: 5 January 2026, 09:00 UTC. */
const seededStart = Date.UTC(2026, 0, 5, 9, 0, 0);

/** Numbers from 0 (inclusive) to 1 drawn from `seed` (the sandbox's mulberry32). */
export function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/** The local runtime with the built-in sandbox, as the benches run it. */
export async function benchPipeline(options: BenchPipelineOptions): Promise<LocalPipeline> {
  const seed = options.engineSeed;
  const clock = options.virtual ? new ManualClock(seed === undefined ? Date.now() : seededStart) : undefined;
  return createLocalPipeline({
    ...(clock ? { time: skippingTime(clock) } : {}),
    ...(seed === undefined ? {} : { random: seededRandom(seed) }),
    config: {
      qps: options.qps,
      concurrency: 8,
      dbPath: join(options.dir, 'opflow.db'),
      outDir: join(options.dir, 'out'),
      sandboxSpeed: options.sandboxSpeed,
    },
    workflows: options.workflows ?? workflows,
    env: options.env ?? {},
    announce: () => undefined,
    log: silentLogger,
    ...(options.fill === false ? { fill: false } : {}),
    sandbox: {
      keys: [options.key ?? { key: SANDBOX_API_KEY, qps: options.qps }],
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      taskDurations: {},
      defaultTaskDuration: options.taskTime ?? taskDuration,
      streamChunkDelayMs: 0,
      ...(options.ledgerBodies ? { ledgerBodies: true } : {}),
    },
  });
}

/** A text table: the headers, a rule, the rows; cells padded at the start (numbers) or the end. */
export function table(headers: string[], rows: string[][], align: 'start' | 'end' = 'start'): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const pad = (cell: string, width: number) =>
    align === 'start' ? cell.padStart(width) : cell.padEnd(width);
  const line = (cells: string[]) => cells.map((cell, i) => pad(cell, widths[i] ?? 0)).join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

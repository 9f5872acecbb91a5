/**
 * The lone job's polls, simulated without the engine: the learned poll timing (poll-timing.ts) and
 * the poll plan (poll-plan.ts) alone, task after task of one operation, as a job alone on its key
 * polls them (the first task probed once a second, then the plan at the lone job's allowance). Per
 * task-time family of the throughput matrix: the delay over the tasks' own time and the polls per
 * task of the measured tasks (those after the warm-up, as in `bench/throughput.ts --only=lone`),
 * over many seeded runs. Fast (seconds), so a change of the estimate can be compared at the same
 * seeds before the bench.
 *
 * `--mode=optimum` plans on the family's true distribution instead (200,000 draws on a lattice 1 %
 * apart, no estimate, no tail guessed): the least delay any poll schedule reaches within the polls,
 * the limit a learned plan is measured against.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import {
  expectedDelay,
  expectedPolls,
  learnedPollDelay,
  planPolls,
  priceFor,
  type TaskLattice,
} from '../shared/engine/poll-plan';
import { type DurationSketch, emptySketch, recordDuration } from '../shared/engine/poll-timing';
import { drawTaskTime } from '../shared/sandbox/task-times';
import { latticeOfSorted } from './task-lattice';
import { type Family, families } from './throughput-worlds';

const usage = `Usage: npx tsx bench/throughput-lone-sim.ts [options]

Options:
  --runs=N        runs per family (default 2000), each from an empty estimate
  --warmup=N      tasks learned before the measured ones (default 4, as the lone job's bench)
  --measured=N    tasks measured after them (default 6)
  --polls=X       polls per task the plan may spend (default 1.78: 0.3 of the novelty check's 13
                  calls over its 5 polled tasks)
  --seed=N        the first run's seed (default 1); every variant of the estimate draws the same tasks
  --families=A,B  of uniform, lognormal, bimodal, pareto, drift (default the first four)
  --mode=MODE     learned (default: what the polls found), exact (each task's true time is
                  learned), known (48 true times learned first, nothing after): the last two show
                  what the censoring and the small sample cost; optimum: the plan on the true
                  distribution (no estimate), the least delay of any schedule within the polls
  --delay=X       with --mode=optimum, also the fewest polls per task within a delay of X of the
                  tasks' time (a goal on time alone, as the heavy-tailed rows' is)
  -h, --help      this text
`;

const optionsSchema = z.strictObject({
  runs: z.coerce.number().int().positive(),
  warmup: z.coerce.number().int().nonnegative(),
  measured: z.coerce.number().int().positive(),
  polls: z.coerce.number().min(1),
  seed: z.coerce.number().int().nonnegative(),
  families: z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(Object.keys(families) as [Family, ...Family[]]))),
  mode: z.enum(['learned', 'exact', 'known', 'optimum']),
  delay: z.coerce.number().positive().optional(),
  help: z.boolean(),
});
type Options = z.infer<typeof optionsSchema>;

/** A small seeded generator (mulberry32): the same seed draws the same tasks. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The summary step's schedule at the bench's sandbox speed (only its give-up time matters here). */
const policy = { firstDelayMs: 1_500, factor: 1.5, maxDelayMs: 6_000, giveUpAfterMs: 180_000 };

/** One task polled until done: its polls, and the interval a finished task teaches. */
function pollTask(sketch: DurationSketch, durationMs: number, pollsPerTask: number) {
  let lastRunningAt = 0;
  let at = 0;
  let polls = 0;
  for (;;) {
    // Nothing known yet: the filler's probe, once a second.
    const delay =
      sketch.count === 0
        ? 1_000
        : learnedPollDelay({
            sketch,
            policy,
            declaredDelayMs: policy.firstDelayMs,
            elapsedMs: at,
            lastPollAtMs: lastRunningAt,
            target: { pollsPerTask },
          });
    at += Math.max(50, delay);
    polls++;
    if (at >= durationMs) return { polls, doneAt: at, lower: lastRunningAt };
    lastRunningAt = at;
  }
}

/** Delay over the tasks' time and polls per task of the measured tasks, over every run. */
function simulate(options: Options, family: Family): { delayShare: number; polls: number } {
  const shape = families[family];
  let delay = 0;
  let time = 0;
  let polls = 0;
  let tasks = 0;
  for (let run = 0; run < options.runs; run++) {
    const random = seeded(options.seed * 1_000_003 + run * 7_919);
    // Each run's records at times of its own (plans are cached by the sketch's content,
    // poll-plan.ts: runs that learned alike share a plan, as two operations that did would).
    const clock = (run + 1) * 1_000;
    let sketch = emptySketch(clock);
    if (options.mode === 'known')
      for (let k = 0; k < 48; k++) {
        const ms = drawTaskTime(shape, random);
        sketch = recordDuration(sketch, ms, ms, clock - 1);
      }
    for (let k = 0; k < options.warmup + options.measured; k++) {
      const durationMs = drawTaskTime(shape, random);
      const task = pollTask(sketch, durationMs, options.polls);
      if (k >= options.warmup) {
        delay += task.doneAt - durationMs;
        time += durationMs;
        polls += task.polls;
        tasks++;
      }
      if (options.mode === 'learned') sketch = recordDuration(sketch, task.lower, task.doneAt, clock + k);
      else if (options.mode === 'exact') sketch = recordDuration(sketch, durationMs, durationMs, clock + k);
    }
  }
  return { delayShare: delay / Math.max(1, time), polls: polls / Math.max(1, tasks) };
}

/**
 * The family's true distribution as a lattice (poll-plan.ts): `draws` tasks, cells 1 % apart from
 * the shortest, each cell's mass the share of tasks ending in it and its mid their mean end.
 */
function trueLattice(
  family: Family,
  seed: number,
  draws = 200_000,
): { lattice: TaskLattice; meanMs: number } {
  const random = seeded(seed);
  return latticeOfSorted(
    Array.from({ length: draws }, () => drawTaskTime(families[family], random)).sort((a, b) => a - b),
  );
}

/** The plan on the true distribution: its delay over the tasks' time, its polls, its first polls (s). */
function optimum(options: Options, family: Family): string {
  const { lattice, meanMs } = trueLattice(family, options.seed);
  const describe = (price: number) => {
    const plan = planPolls(lattice, price);
    const firsts: string[] = [];
    for (let i = 0, k = 0; k < 4 && i < lattice.times.length - 1; k++) {
      i = plan.next[i] ?? lattice.times.length - 1;
      firsts.push(((lattice.times[i] ?? 0) / 1000).toFixed(2));
    }
    return `delay / tasks' time ${(expectedDelay(plan) / meanMs).toFixed(3)}   polls per task ${expectedPolls(plan).toFixed(2)}   first polls at ${firsts.join(', ')} s`;
  };
  const lines = [`${family.padEnd(10)} ${describe(priceFor(lattice, { pollsPerTask: options.polls }))}`];
  if (options.delay !== undefined)
    lines.push(`${''.padEnd(10)} ${describe(priceFor(lattice, { delayMs: options.delay * meanMs }))}`);
  return lines.join('\n');
}

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '4' },
    measured: { type: 'string', default: '6' },
    polls: { type: 'string', default: '1.78' },
    seed: { type: 'string', default: '1' },
    families: { type: 'string', default: 'uniform,lognormal,bimodal,pareto' },
    mode: { type: 'string', default: 'learned' },
    delay: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const parsed = optionsSchema.safeParse(values);
if (!parsed.success) {
  process.stderr.write(`bad flags: ${z.prettifyError(parsed.error)}\n\n${usage}`);
  process.exit(2);
}
if (parsed.data.help) process.stdout.write(usage);
else {
  const options = parsed.data;
  console.log(
    options.mode === 'optimum'
      ? `lone job's polls on the true distribution (200,000 draws, seed ${options.seed}): ${options.polls} polls a task` +
          (options.delay === undefined ? '' : `; then a delay of ${options.delay} of the tasks' time`)
      : `lone job's polls, simulated: ${options.runs} runs a family, ${options.warmup} tasks learned then ${options.measured} measured, ` +
          `${options.polls} polls a task, seed ${options.seed}, mode ${options.mode}`,
  );
  for (const family of options.families) {
    if (options.mode === 'optimum') {
      console.log(optimum(options, family));
      continue;
    }
    const { delayShare, polls } = simulate(options, family);
    console.log(
      `${family.padEnd(10)} delay / tasks' time ${delayShare.toFixed(3)}   polls per task ${polls.toFixed(2)}`,
    );
  }
}

/**
 * The lone job's polls, simulated without the engine: the learned poll timing (poll-timing.ts) and
 * the poll plan (poll-plan.ts) alone, task after task of one operation, as a job alone on its key
 * polls them (the first task probed once a second, then the plan at the lone job's allowance). Per
 * task-time family of the throughput matrix: the delay over the tasks' own time and the polls per
 * task of the measured tasks (those after the warm-up, as in `bench/throughput.ts --only=lone`),
 * over many seeded runs. Fast (seconds), so a change of the estimate can be compared at the same
 * seeds before the bench.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { learnedPollDelay } from '../shared/engine/poll-plan';
import { type DurationSketch, emptySketch, recordDuration } from '../shared/engine/poll-timing';
import { drawTaskTime } from '../shared/sandbox/task-times';
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
                  what the censoring and the small sample cost
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
  mode: z.enum(['learned', 'exact', 'known']),
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
    let sketch = emptySketch(0);
    if (options.mode === 'known')
      for (let k = 0; k < 48; k++) {
        const ms = drawTaskTime(shape, random);
        sketch = recordDuration(sketch, ms, ms, -1);
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
      if (options.mode === 'learned') sketch = recordDuration(sketch, task.lower, task.doneAt, k);
      else if (options.mode === 'exact') sketch = recordDuration(sketch, durationMs, durationMs, k);
    }
  }
  return { delayShare: delay / Math.max(1, time), polls: polls / Math.max(1, tasks) };
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
    `lone job's polls, simulated: ${options.runs} runs a family, ${options.warmup} tasks learned then ${options.measured} measured, ` +
      `${options.polls} polls a task, seed ${options.seed}, mode ${options.mode}`,
  );
  for (const family of options.families) {
    const { delayShare, polls } = simulate(options, family);
    console.log(
      `${family.padEnd(10)} delay / tasks' time ${delayShare.toFixed(3)}   polls per task ${polls.toFixed(2)}`,
    );
  }
}

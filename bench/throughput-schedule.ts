/**
 * Is 1.10 of the bound reachable at all? The batch of novelty checks scheduled offline, without the
 * engine (bench/throughput.md, "The bound, checked"): pure, seeded and fast, so a schedule any
 * client could follow is measured against the bench's bounds on thousands of batches.
 *
 * The world is the bench's, exactly: each job is the novelty check's chain of 13 calls (a call that
 * starts a task, then its polled step, which a poll passes only once the task's drawn duration has
 * gone by; any other call follows at once), the tasks' durations are the sandbox's draws
 * (`TaskTimes`: the same seed, operation and task id as the sandbox's, drift's slowdown by the
 * tasks running when one starts included), the task ids the sandbox hands out for the seed, and the
 * key's limiter is the sandbox's (`KeyLimiter`, checked call for call against `KeyGate` in
 * test/unit/bench/throughput-schedule.test.ts). Calls take no clock time, as on the virtual clock.
 *
 * A schedule is an order and a poll timing. Each time the key can admit a call, the ready call
 * first in the order takes it (never a token left unused while a call is ready). Orders: `lrc`, the
 * longest remaining chain first (the tasks' true times ahead, a token interval per other call);
 * `fifo`, the call ready first (roughly the runtime's line); `steps`, the most calls left first;
 * `expected`, the longest expected remaining chain (from the distribution, not the draws). Poll
 * timings: `clairvoyant`, one poll at the task's true end; `plan`, the poll plan on the family's
 * true distribution (poll-plan.ts on 200,000 draws, as `throughput-lone-sim.ts --mode=optimum`),
 * at a price per call, which a client knowing the distribution but not the draws can follow.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { type PollPlan, plannedPollAt, planPolls, priceFor, residualMs } from '../shared/engine/poll-plan';
import type { TaskDuration } from '../shared/sandbox';
import { SeededRandom } from '../shared/sandbox/seeded';
import { drawTaskTime, TaskTimes } from '../shared/sandbox/task-times';
import { noveltyCheck } from '../shared/workflows';
import { latticeOfSorted } from './task-lattice';
import { chainBudgetBoundMs } from './throughput-bound';
import { type Family, families, type Limiter, limiters, matrixQps } from './throughput-worlds';

/** The key's limiter as the sandbox counts it (key-gate.ts), on a clock given to each call, or calls spaced at the rate. */
export type LimiterKind = Limiter | 'spaced';

/**
 * The sandbox's limiter (key-gate.ts `admitted`) with the earliest time it admits a call: a sliding
 * 1 s window of admitted calls, a token bucket of `burst` tokens refilled at `qps` a second, a count
 * per second of the clock; or `spaced`, calls at least 1/QPS apart (what opflow's limiter and the
 * bench's bounds assume). Times are ms and never go back.
 */
export class KeyLimiter {
  private recent: number[] = [];
  private tokens: number;
  private tokensAt: number | undefined;
  private second = Number.NaN;
  private inSecond = 0;
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    readonly kind: LimiterKind,
    readonly qps: number,
    readonly burst = kind === 'bucket' ? 2 * qps : Math.max(1, qps),
  ) {
    this.tokens = this.burst;
  }

  /** Whether a call at `now` is admitted (nothing counted). */
  admits(now: number): boolean {
    switch (this.kind) {
      case 'bucket':
        return this.tokensAtTime(now) >= 1;
      case 'fixed':
        return Math.floor(now / 1000) !== this.second || this.inSecond < this.qps;
      case 'spaced':
        return now - this.last >= 1000 / this.qps - 1e-9;
      default:
        return this.recent.filter((at) => at > now - 1000 && at <= now).length < this.qps;
    }
  }

  /** Count a call at `now` (admitted: see `admits`). */
  take(now: number): void {
    switch (this.kind) {
      case 'bucket':
        this.tokens = this.tokensAtTime(now) - 1;
        this.tokensAt = Math.max(this.tokensAt ?? now, now);
        return;
      case 'fixed': {
        const second = Math.floor(now / 1000);
        if (second !== this.second) {
          this.second = second;
          this.inSecond = 0;
        }
        this.inSecond++;
        return;
      }
      case 'spaced':
        this.last = now;
        return;
      default:
        this.recent = this.recent.filter((at) => at > now - 1000 && at <= now);
        this.recent.push(now);
    }
  }

  /** The earliest whole ms from `now` on at which a call is admitted. */
  nextFree(now: number): number {
    if (this.admits(now)) return now;
    let at = now;
    switch (this.kind) {
      case 'bucket':
        at = Math.max(now, Math.ceil((this.tokensAt ?? now) + ((1 - this.tokens) * 1000) / this.qps));
        break;
      case 'fixed':
        at = (this.second + 1) * 1000;
        break;
      case 'spaced':
        at = Math.ceil(this.last + 1000 / this.qps - 1e-9);
        break;
      default: {
        const inWindow = this.recent.filter((time) => time > now - 1000 && time <= now);
        at = (inWindow[inWindow.length - this.qps] ?? now) + 1000;
      }
    }
    // Rounding of the bucket's tokens: step to the first ms the limiter itself admits.
    while (!this.admits(at)) at++;
    return at;
  }

  private tokensAtTime(now: number): number {
    const elapsed = Math.max(0, now - (this.tokensAt ?? now));
    return Math.min(this.burst, this.tokens + (elapsed / 1000) * this.qps);
  }
}

/** The novelty check's calls (its steps that call), and which start a task (the call before a polled step). */
const callSteps = noveltyCheck.steps.filter((step) => step.kind !== 'fetch');
/** Operation of each call that starts a task, in order (the sandbox draws the task's time by it). */
const taskStarters: string[] = callSteps.flatMap((step, i) =>
  callSteps[i + 1]?.poll !== undefined && 'operation' in step ? [String(step.operation)] : [],
);

/** A job's chain: `tasks[k]` starts at call `starts[k]`, polled by the call after it. */
export interface ChainShape {
  calls: number;
  /** The calls that start a task, ascending. */
  starts: readonly number[];
}

/** The novelty check's chain: 13 calls, 5 tasks. */
export const noveltyChain: ChainShape = {
  calls: callSteps.length,
  starts: callSteps.flatMap((_, i) => (callSteps[i + 1]?.poll !== undefined ? [i] : [])),
};

/** One job of a batch: its tasks' durations before any slowdown and how the sandbox draws them. */
export interface JobDraws {
  /** Durations before any slowdown (what a clairvoyant order reads), ms. */
  base: readonly number[];
  /** The task's drawn duration when it starts at `now` (drift's slowdown by the tasks then running). */
  draw: (task: number, now: number) => number;
}

/**
 * The batch the sandbox of seed `seed` draws for `jobs` novelty checks: task ids as it hands them
 * out (`SeededRandom.from(seed, 'ids')`, 32 hex digits a submit), each task's time from its
 * operation and id (the export's salted `<id>:1`), drift's slowdown counted across the batch.
 */
export function sandboxBatch(seed: number, jobs: number, duration: TaskDuration): JobDraws[] {
  const ids = SeededRandom.from(seed, 'ids');
  const times = new TaskTimes(seed);
  return Array.from({ length: jobs }, () => {
    const id = ids.hex(32);
    const salts = taskStarters.map((operation) =>
      operation === 'ai35-10NoveltySearchExport' ? `${id}:1` : id,
    );
    const base = taskStarters.map((operation, k) => {
      const random = SeededRandom.from(seed, 'duration', operation, salts[k] ?? id);
      return drawTaskTime(duration, () => random.next());
    });
    return {
      base,
      draw: (task: number, now: number) =>
        times.draw(duration, taskStarters[task] ?? '', salts[task] ?? id, now),
    };
  });
}

/** How a schedule times a task's polls: when to poll after the task started or was last found running. */
export interface PollTiming {
  /**
   * The next poll's time (ms from the task's start) of a task that started `factor` times slower
   * than its family (drift), last found running at `runningAtMs` (0: none yet).
   */
  next: (runningAtMs: number, factor: number) => number;
  /** The task's expected duration (ms from its start), found running at `runningAtMs`. */
  expectedEnd: (runningAtMs: number, factor: number) => number;
  /** The chance the task has ended by `elapsedMs` from its start, found running at `runningAtMs`. */
  doneBy: (runningAtMs: number, elapsedMs: number, factor: number) => number;
}

export type Order = 'lrc' | 'fifo' | 'steps' | 'fewest' | 'expected';

export interface ScheduleOptions {
  order: Order;
  /** Undefined: clairvoyant, one poll at the task's true end. */
  timing?: PollTiming | undefined;
  /** The family's mean task time (the `expected` order's tasks ahead), ms. */
  meanMs?: number | undefined;
  /** Drift: each task started this much longer per task running (the family's rule, known to the client). */
  slowdown?: { perTask: number; max: number } | undefined;
  /**
   * A token the key would leave unused goes to a poll of the running task most likely ended by
   * now (by `timing.doneBy`), when that chance is at least `threshold` and the polls found running
   * so far (the calls over the minimum) are fewer than `allowance`.
   */
  fill?: { threshold: number; allowance: number } | undefined;
  /**
   * A task whose job's expected chain after its start is among the `top` longest of the jobs not
   * done is polled by `timing` instead (a plan that polls sooner: the jobs that decide the end),
   * while the polls found running so far are fewer than `allowance`.
   */
  critical?: { timing: PollTiming; top: number; allowance: number } | undefined;
  /**
   * A poll that finds running a task of one of the `top` jobs of longest expected chain left (the
   * running task's expected rest included: a straggler's grows as it runs) polls it again no later
   * than `share` of the batch's expected end by that job (now plus its chain left) later, while the
   * polls found running so far are fewer than `allowance`.
   */
  straggler?: { share: number; top: number; allowance: number } | undefined;
}

export interface ScheduleResult {
  makespanMs: number;
  calls: number;
  /** Each job's tasks' durations as drawn in this schedule (the bench's bounds read them). */
  tasks: number[][];
}

interface JobState {
  index: number;
  /** The next call (0 to calls; `calls`: done). */
  call: number;
  readyAt: number;
  /** The running task: which, when it started, its drawn duration, its slowdown, when last found running. */
  task: number;
  startedAt: number;
  durationMs: number;
  factor: number;
  runningAt: number;
  drawn: number[];
  /** The running task's poll timing (the schedule's, or the critical jobs'). */
  timing: PollTiming | undefined;
}

/**
 * One batch, all jobs admitted at 0, under one schedule: each time the key admits a call, the
 * ready call first in the order makes it. Returns the makespan (the last job's last call), the
 * calls made and the tasks' durations as drawn.
 */
export function schedule(
  chain: ChainShape,
  batch: readonly JobDraws[],
  limiter: KeyLimiter,
  options: ScheduleOptions,
): ScheduleResult {
  const intervalMs = 1000 / limiter.qps;
  const jobs: JobState[] = batch.map((_, index) => ({
    index,
    call: 0,
    readyAt: 0,
    task: -1,
    startedAt: 0,
    durationMs: 0,
    factor: 1,
    runningAt: 0,
    drawn: [],
    timing: options.timing,
  }));
  const ends: number[] = [];
  let factorNow = Number.NaN;
  let factorValue = 1;
  const factorAt = (now: number) => {
    if (!options.slowdown) return 1;
    if (now !== factorNow) {
      const running = ends.filter((end) => end > now).length;
      factorValue = Math.min(options.slowdown.max, 1 + options.slowdown.perTask * running);
      factorNow = now;
    }
    return factorValue;
  };
  const polls = Array.from({ length: chain.calls }, (_, call) => chain.starts.includes(call - 1));
  // After each call: the token intervals and the tasks (their indexes) ahead on the chain.
  const intervalsAfter = new Array<number>(chain.calls).fill(0);
  const tasksAfter: number[][] = Array.from({ length: chain.calls }, () => []);
  for (let call = chain.calls - 2; call >= 0; call--) {
    const task = chain.starts.indexOf(call);
    intervalsAfter[call] = (intervalsAfter[call + 1] ?? 0) + (task < 0 ? intervalMs : 0);
    tasksAfter[call] = [...(tasksAfter[call + 1] ?? []), ...(task < 0 ? [] : [task])];
  }
  const baseAfter = batch.map((job) =>
    tasksAfter.map((tasks) => tasks.reduce((sum, task) => sum + (job.base[task] ?? 0), 0)),
  );
  /** The chain after `job`'s next call, ms: tasks ahead (true, or expected), a token interval per other gap. */
  const chainAfter = (job: JobState, now: number, expected: boolean) => {
    const tasks = expected
      ? (tasksAfter[job.call]?.length ?? 0) * (options.meanMs ?? 0)
      : (baseAfter[job.index]?.[job.call] ?? 0);
    let total = (intervalsAfter[job.call] ?? 0) + tasks * factorAt(now);
    if (polls[job.call]) {
      // The running task's rest: none once it ended (clairvoyant), else its expected rest.
      const end = expected ? (job.timing?.expectedEnd(job.runningAt, job.factor) ?? 0) : job.durationMs;
      const rest = job.startedAt + end - now;
      total += Math.max(0, rest);
    }
    return total;
  };
  const key = (job: JobState, now: number): number => {
    switch (options.order) {
      case 'fifo':
        return job.readyAt + job.index * 1e-6;
      case 'steps':
        return -(chain.calls - job.call) + job.index * 1e-6;
      case 'fewest':
        return chain.calls - job.call + job.index * 1e-6;
      case 'expected':
        return -chainAfter(job, now, true) + job.index * 1e-6;
      default:
        return -chainAfter(job, now, false) + job.index * 1e-6;
    }
  };
  let now = 0;
  let calls = 0;
  let wasted = 0;
  let makespan = 0;
  let left = jobs.length;
  while (left > 0) {
    now = limiter.nextFree(now);
    let best: JobState | undefined;
    let bestKey = Number.POSITIVE_INFINITY;
    let soonest = Number.POSITIVE_INFINITY;
    for (const job of jobs) {
      if (job.call >= chain.calls) continue;
      if (job.readyAt > now) {
        soonest = Math.min(soonest, job.readyAt);
        continue;
      }
      const k = key(job, now);
      if (k < bestKey) {
        bestKey = k;
        best = job;
      }
    }
    if (!best && options.fill && options.timing && wasted < options.fill.allowance) {
      let likeliest = options.fill.threshold;
      for (const job of jobs) {
        if (job.call >= chain.calls || !polls[job.call] || job.readyAt <= now) continue;
        const chance = (job.timing ?? options.timing).doneBy(job.runningAt, now - job.startedAt, job.factor);
        if (chance >= likeliest) {
          likeliest = chance;
          best = job;
        }
      }
    }
    if (!best) {
      // With polls to fill idle tokens, look again a token later (a task's chance grows meanwhile).
      const filling = options.fill && wasted < options.fill.allowance && soonest < Number.POSITIVE_INFINITY;
      now = filling ? Math.min(soonest, Math.floor(now + intervalMs)) : soonest;
      continue;
    }
    limiter.take(now);
    calls++;
    if (polls[best.call] && now - best.startedAt < best.durationMs) {
      // Found running: the next poll by the timing (never without a timing: it polls at the end).
      best.runningAt = now - best.startedAt;
      wasted++;
      let next = best.timing?.next(best.runningAt, best.factor) ?? best.durationMs;
      const straggler = options.straggler;
      if (straggler && wasted < straggler.allowance) {
        const own = chainAfter(best, now, true);
        const longer = jobs.filter(
          (job) => job !== best && job.call < chain.calls && chainAfter(job, now, true) > own,
        ).length;
        if (longer < straggler.top)
          next = Math.min(next, best.runningAt + Math.max(intervalMs, straggler.share * (now + own)));
      }
      best.readyAt = best.startedAt + Math.max(best.runningAt + 1, Math.ceil(next));
      continue;
    }
    const task = chain.starts.indexOf(best.call);
    best.call++;
    best.readyAt = now;
    if (task >= 0) {
      best.task = task;
      best.startedAt = now;
      best.factor = factorAt(now);
      best.durationMs = batch[best.index]?.draw(task, now) ?? 0;
      best.runningAt = 0;
      best.drawn.push(best.durationMs);
      ends.push(now + best.durationMs);
      best.timing = options.timing;
      if (options.critical && wasted < (options.fill?.allowance ?? options.critical.allowance)) {
        const own = chainAfter(best, now, true);
        const longer = jobs.filter(
          (job) => job !== best && job.call < chain.calls && chainAfter(job, now, true) > own,
        ).length;
        if (longer < options.critical.top) best.timing = options.critical.timing;
      }
      const first = best.timing?.next(0, best.factor) ?? best.durationMs;
      best.readyAt = now + Math.max(1, Math.ceil(first));
    }
    if (best.call >= chain.calls) {
      left--;
      makespan = Math.max(makespan, now);
    }
  }
  return { makespanMs: makespan, calls, tasks: jobs.map((job) => job.drawn) };
}

/** The matrix's bound (ms): the larger of the minimum calls at the QPS and the longest own tasks' time. */
export function matrixBoundMs(chain: ChainShape, tasks: readonly (readonly number[])[], qps: number): number {
  const longest = Math.max(0, ...tasks.map((job) => job.reduce((sum, ms) => sum + ms, 0)));
  return Math.max((chain.calls * tasks.length * 1000) / qps, longest);
}

/** The `chain+budget` bound (throughput-bound.ts) of a batch's tasks, ms. */
export function chainBoundMs(tasks: readonly (readonly number[])[], qps: number): number {
  return chainBudgetBoundMs(noveltyCheck, new Map(tasks.map((job, i) => [String(i), [...job]])), qps);
}

/** The family's true distribution as a poll-plan lattice: `draws` tasks, cells 1 % apart (as throughput-lone-sim.ts). */
export function familyLattice(duration: TaskDuration, seed: number, draws = 200_000) {
  const random = new SeededRandom(seed);
  return latticeOfSorted(
    Array.from({ length: draws }, () => drawTaskTime(duration, () => random.next())).sort((a, b) => a - b),
  );
}

/** The share of the lattice's tasks ended by `atMs` (pro rata inside a cell). */
function endedBy(plan: PollPlan, atMs: number): number {
  const times = plan.lattice.times;
  let low = 0;
  let high = times.length - 1;
  if (atMs >= (times[high] ?? 0)) return 1;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if ((times[middle] ?? 0) <= atMs) low = middle;
    else high = middle;
  }
  const start = times[low] ?? 0;
  const end = times[high] ?? start;
  const share = end > start ? (atMs - start) / (end - start) : 1;
  return (plan.ended[low] ?? 0) + share * (plan.lattice.mass[high] ?? 0);
}

/** The plan's poll timing, its times scaled by a task's slowdown (drift's tasks are the family's, slower). */
export function planTiming(plan: PollPlan): PollTiming {
  const last = plan.lattice.times[plan.lattice.times.length - 1] ?? 0;
  return {
    next: (runningAtMs, factor) => {
      const at = plannedPollAt(plan, runningAtMs / factor, runningAtMs / factor + 1);
      return (at ?? Math.max(last, runningAtMs / factor + 1000)) * factor;
    },
    expectedEnd: (runningAtMs, factor) =>
      runningAtMs + (residualMs(plan.lattice, runningAtMs / factor) ?? 0) * factor,
    doneBy: (runningAtMs, elapsedMs, factor) => {
      const before = endedBy(plan, runningAtMs / factor);
      return before >= 1 ? 1 : (endedBy(plan, elapsedMs / factor) - before) / (1 - before);
    },
  };
}

const usage = `Usage: npx tsx bench/throughput-schedule.ts [options]

Options:
  --batches=N     batches a cell (default 200): the cell's bench seed, then seed + 1000, + 2000...
  --seed=N        the matrix's base seed (default 200: each cell's seed as bench/throughput.ts's)
  --jobs=N        novelty checks a batch (default 30)
  --qps=A,B       of 2, 5, 20 (default 20,5,2, in that order)
  --families=A,B  of uniform, lognormal, bimodal, pareto, drift (default all)
  --limiters=A,B  of sliding, bucket, fixed, spaced (default the first three)
  --orders=A,B    the clairvoyant schedules' orders, of lrc, fifo, steps, fewest (default all)
  --known-orders=A,B  the known plans' orders, of expected, fifo, fewest (default
                  expected,fifo)
  --polls=A,B     polls per task the known plans may spend, tried in turn (default 1,1.05,1.13:
                  at 1.13 the calls are 1.05 of the minimum)
  --fill=A,B      also each known plan with idle tokens given to a poll of the task likeliest
                  ended, when its chance is at least A (then B...), within calls 1.05 of the
                  minimum (default 0.3,0.6; empty: none)
  --critical=T@P  also each known plan with the tasks of the T jobs of longest expected chain left
                  polled by the plan at P polls a task, alone and with the first --fill (default
                  3@1.5,8@1.5; empty: none)
  --straggler=S   also each known plan with the job of longest expected chain left (a task found
                  running long) polled again within S of the batch's expected end by it (default
                  0.03,0.06; empty: none)
  -h, --help      this text
`;

const listOf = <T extends string>(values: readonly [T, ...T[]]) =>
  z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(values)).min(1));

const optionsSchema = z.strictObject({
  batches: z.coerce.number().int().positive(),
  seed: z.coerce.number().int().nonnegative(),
  jobs: z.coerce.number().int().positive(),
  qps: z
    .string()
    .transform((text) => text.split(',').map(Number))
    .pipe(
      z
        .array(
          z.number().refine((qps) => (matrixQps as readonly number[]).includes(qps), 'a QPS of the matrix'),
        )
        .min(1),
    ),
  families: listOf(Object.keys(families) as [Family, ...Family[]]),
  limiters: listOf(['sliding', 'bucket', 'fixed', 'spaced'] as const),
  orders: listOf(['lrc', 'fifo', 'steps', 'fewest'] as const),
  knownOrders: listOf(['expected', 'fifo', 'fewest'] as const),
  critical: z
    .string()
    .transform((text) => (text === '' ? [] : text.split(',')))
    .pipe(
      z.array(
        z
          .string()
          .regex(/^\d+@\d+(\.\d+)?$/, 'TOP@POLLS, e.g. 5@1.5')
          .transform((item) => {
            const [top, polls] = item.split('@').map(Number);
            return { top: top ?? 0, polls: polls ?? 1 };
          }),
      ),
    ),
  fill: z
    .string()
    .transform((text) => (text === '' ? [] : text.split(',').map(Number)))
    .pipe(z.array(z.number().min(0).max(1))),
  straggler: z
    .string()
    .transform((text) => (text === '' ? [] : text.split(',').map(Number)))
    .pipe(z.array(z.number().positive().max(1))),
  polls: z
    .string()
    .transform((text) => text.split(',').map(Number))
    .pipe(z.array(z.number().min(1)).min(1)),
  help: z.boolean(),
});
type Options = z.infer<typeof optionsSchema>;

/** One figure over the batches: median and worst. */
function spread(values: readonly number[]): { median: number; worst: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN,
    worst: sorted.at(-1) ?? Number.NaN,
  };
}

interface Row {
  /** Makespan over the matrix's bound, over chain+budget, calls over the minimum: per batch. */
  bound: number[];
  chain: number[];
  calls: number[];
  /** Batches meeting both goals (makespan <= 1.10 of the bound, calls <= 1.05). */
  met: number;
}

/** The cell's index in the bench's order (family x limiter x QPS), so its seed is the bench's. */
function benchIndex(family: Family, limiter: LimiterKind, qps: number): number {
  const f = (Object.keys(families) as Family[]).indexOf(family);
  const l = Math.max(0, (Object.keys(limiters) as Limiter[]).indexOf(limiter as Limiter));
  return (
    f * Object.keys(limiters).length * matrixQps.length +
    l * matrixQps.length +
    (matrixQps as readonly number[]).indexOf(qps)
  );
}

function runCell(
  options: Options,
  family: Family,
  limiter: LimiterKind,
  qps: number,
  schedules: Record<string, ScheduleOptions>,
): { seed: number; rows: Record<string, Row>; first: Record<string, string> } {
  const duration: TaskDuration = families[family];
  const seed = options.seed + benchIndex(family, limiter, qps);
  const rows: Record<string, Row> = {};
  const first: Record<string, string> = {};
  const minCalls = noveltyChain.calls * options.jobs;
  for (let b = 0; b < options.batches; b++) {
    const batchSeed = seed + 1000 * b;
    for (const [name, scheduleOptions] of Object.entries(schedules)) {
      const result = schedule(
        noveltyChain,
        sandboxBatch(batchSeed, options.jobs, duration),
        new KeyLimiter(limiter, qps),
        scheduleOptions,
      );
      const bound = matrixBoundMs(noveltyChain, result.tasks, qps);
      const chainBound = chainBoundMs(result.tasks, qps);
      const row = rows[name] ?? { bound: [], chain: [], calls: [], met: 0 };
      const ratio = result.makespanMs / bound;
      const calls = result.calls / minCalls;
      row.bound.push(ratio);
      row.chain.push(result.makespanMs / chainBound);
      row.calls.push(calls);
      if (ratio <= 1.1 + 1e-9 && calls <= 1.05 + 1e-9) row.met++;
      rows[name] = row;
      if (b === 0)
        first[name] =
          `${ratio.toFixed(2)} ${(result.makespanMs / chainBound).toFixed(2)} ${calls.toFixed(2)}`;
    }
  }
  return { seed, rows, first };
}

/** The known plans' schedules of a family: the plan at each polls-per-task target, expected-chain order. */
function knownSchedules(options: Options, family: Family): Record<string, ScheduleOptions> {
  const shape = families[family];
  const { lattice, meanMs } = familyLattice(shape, 1);
  const slowdown =
    'slowdownPerRunningTask' in shape
      ? { perTask: shape.slowdownPerRunningTask, max: shape.maxSlowdown }
      : undefined;
  const out: Record<string, ScheduleOptions> = {};
  const planAt = (polls: number) =>
    planTiming(planPolls(lattice, priceFor(lattice, { pollsPerTask: polls })));
  const allowance = Math.floor(0.05 * noveltyChain.calls * options.jobs);
  const critical = options.critical.map(({ top, polls }) => ({ top, polls, timing: planAt(polls) }));
  for (const polls of options.polls) {
    const timing = planAt(polls);
    for (const order of options.knownOrders) {
      const name = `known ${order} ${polls}`;
      const base: ScheduleOptions = { order, timing, meanMs, slowdown };
      out[name] = base;
      for (const threshold of options.fill)
        out[`${name} fill ${threshold}`] = { ...base, fill: { threshold, allowance } };
      for (const share of options.straggler)
        out[`${name} straggler ${share}`] = { ...base, straggler: { share, top: 1, allowance } };
      for (const { top, polls: fast, timing: fastTiming } of critical) {
        out[`${name} top ${top}@${fast}`] = { ...base, critical: { top, timing: fastTiming, allowance } };
        const threshold = options.fill[0];
        if (threshold !== undefined)
          out[`${name} top ${top}@${fast} fill ${threshold}`] = {
            ...base,
            critical: { top, timing: fastTiming, allowance },
            fill: { threshold, allowance },
          };
      }
    }
  }
  return out;
}

function main(options: Options): void {
  const fmt = (values: number[]) => {
    const { median, worst } = spread(values);
    return `${median.toFixed(2)}/${worst.toFixed(2)}`;
  };
  console.log(
    `batch of ${options.jobs} novelty checks scheduled offline, ${options.batches} batches a cell (the cell's bench seed, then +1000 each); ` +
      'per schedule: makespan/bound, makespan/chain+budget, calls/min, each median/worst; met: batches within 1.10 and 1.05; ' +
      "seed: the bench's cell (bound chain+budget calls)",
  );
  for (const qps of options.qps)
    for (const family of options.families) {
      const shape = families[family];
      const slowdown =
        'slowdownPerRunningTask' in shape
          ? { perTask: shape.slowdownPerRunningTask, max: shape.maxSlowdown }
          : undefined;
      const clairvoyant: Record<string, ScheduleOptions> = Object.fromEntries(
        options.orders.map((order) => [order, { order, slowdown }]),
      );
      const known = knownSchedules(options, family);
      for (const limiter of options.limiters) {
        const cell = runCell(options, family, limiter, qps, { ...clairvoyant, ...known });
        console.log(`\n${family} ${limiter} ${qps}/s (seed ${cell.seed})`);
        const line = (name: string, row: Row) =>
          `${name.padEnd(34)} ${fmt(row.bound)}  ${fmt(row.chain)}  ${fmt(row.calls)}  met ${String(row.met).padStart(3)}/${options.batches}  seed: ${cell.first[name]}`;
        for (const [name, row] of Object.entries(cell.rows)) console.log(`  ${line(name, row)}`);
        // The known schedule meeting the goals most often (then the lowest median makespan).
        const knownRows = Object.entries(cell.rows).filter(([name]) => name.startsWith('known'));
        knownRows.sort(([, a], [, b]) => b.met - a.met || spread(a.bound).median - spread(b.bound).median);
        const [bestName, bestRow] = knownRows[0] ?? [];
        if (bestName && bestRow) console.log(`  best ${line(bestName, bestRow)}`);
      }
    }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '200' },
      seed: { type: 'string', default: '200' },
      jobs: { type: 'string', default: '30' },
      qps: { type: 'string', default: '20,5,2' },
      families: { type: 'string', default: Object.keys(families).join(',') },
      limiters: { type: 'string', default: 'sliding,bucket,fixed' },
      polls: { type: 'string', default: '1,1.05,1.13' },
      orders: { type: 'string', default: 'lrc,fifo,steps,fewest' },
      'known-orders': { type: 'string', default: 'expected,fifo' },
      fill: { type: 'string', default: '0.3,0.6' },
      critical: { type: 'string', default: '3@1.5,8@1.5' },
      straggler: { type: 'string', default: '0.03,0.06' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const { 'known-orders': knownOrders, ...rest } = values;
  const parsed = optionsSchema.safeParse({ ...rest, knownOrders });
  if (!parsed.success) {
    process.stderr.write(`bad flags: ${z.prettifyError(parsed.error)}\n\n${usage}`);
    process.exit(2);
  }
  if (parsed.data.help) process.stdout.write(usage);
  else main(parsed.data);
}

/**
 * Poll plans: when to look at a running task again, chosen by cost. A poll that finds the task
 * running is a call spent for nothing; a poll that comes after the task ended delays its job by
 * the difference. With the learned distribution of the operation's task times (poll-timing.ts),
 * extended past the longest task seen by a Pareto tail of the estimated tail index, the plan
 * minimizes the expected delay plus `priceMs` times the expected polls, over every sequence of
 * poll times (dynamic programming over a lattice of times). Conditioned on the time a poll last
 * found the task running, each next poll follows from the hazard of the distribution: near the
 * bulk of the tasks the polls come close together, past every task seen they space out
 * geometrically at a ratio the tail index sets (a heavy tail: wide steps; a thin one: close ones).
 *
 * The price of a poll is what a call is worth in milliseconds of its job's time. `priceFor` finds
 * the price at which a task's plan spends a given number of polls on average (the least expected
 * delay within that many polls per task: a Lagrange multiplier), or a given delay on average (the
 * fewest polls within that delay).
 * Pure: callers cache nothing but the plans this module caches itself.
 */
import type { PollPolicy } from './policies';
import { type DurationSketch, sketchCells } from './poll-timing';

/** Parts each bucket of the sketch (20 % wide) is split into: poll times about 7 % apart. */
const cellSplit = 3;
/**
 * Past the longest task seen, lattice times grow by this factor (the sketch's own bucket growth:
 * no finer than what was learned), up to `tailReach` times it (what the tail holds past that is
 * found by a poll there).
 */
const tailGrowth = 1.2;
const tailReach = 100;
/** The latest time a lattice reaches, whatever was seen (a day). */
const latestMs = 86_400_000;
/** Fewer observations than this give no tail index: a heavy tail (index 1) is assumed. */
const minTailObservations = 3;
const unknownTailIndex = 1;
const tailIndexRange = [1, 20] as const;

/** Times (ms from a task's start) and the share of tasks that end in each cell of them. */
export interface TaskLattice {
  /** Poll times considered, ascending; `times[0]` is the task's start. */
  times: Float64Array;
  /** The share of tasks ending in (times[i - 1], times[i]] (`mass[0]` is 0); all sum to 1. */
  mass: Float64Array;
  /** Where in that cell those tasks end, on average. */
  mid: Float64Array;
  /** The tail index used past the longest task seen. */
  tailIndex: number;
}

/**
 * The tail index of the task times (Hill's estimator over the upper eighth of the kept
 * observations, each taken at the middle of its interval): about 1.5 for a Pareto upstream of
 * index 1.5, large (a thin tail) for times bounded like 1 to 3 s. Undefined with too few tasks.
 */
export function tailIndex(sketch: DurationSketch): number | undefined {
  const obs = sketch.obs ?? [];
  const values: number[] = [];
  for (let i = 0; i + 1 < obs.length; i += 2) {
    const lower = obs[i] ?? 0;
    const upper = obs[i + 1] ?? lower;
    const value = lower > 0 ? (lower + upper) / 2 : upper;
    if (value > 0) values.push(value);
  }
  if (values.length < minTailObservations) return undefined;
  values.sort((a, b) => b - a);
  const k = Math.max(2, Math.floor(values.length / 8));
  const threshold = values[k] ?? 0;
  if (threshold <= 0) return undefined;
  let sum = 0;
  for (let i = 0; i < k; i++) sum += Math.log((values[i] ?? threshold) / threshold);
  const [low, high] = tailIndexRange;
  return sum <= 0 ? high : Math.min(high, Math.max(low, (k - 1) / sum));
}

/**
 * The lattice of a sketch: its buckets split in `cellSplit`, then a tail past the last bucket with
 * weight. The tail holds the share 1/(n + 1) of the tasks (n: the sketch's weight; among n + 1
 * tasks, the chance the newest outlasts all others), spread as a Pareto of the estimated index.
 */
export function taskLattice(sketch: DurationSketch, withTail = true): TaskLattice | undefined {
  const cells = sketchCells(sketch);
  const total = cells.reduce((sum, cell) => sum + cell.weight, 0);
  if (cells.length === 0 || total <= 0) return undefined;
  const alpha = tailIndex(sketch) ?? unknownTailIndex;
  const tail = withTail ? 1 / (Math.max(1, sketch.n) + 1) : 0;
  const times: number[] = [0];
  const mass: number[] = [0];
  const mid: number[] = [0];
  for (const cell of cells) {
    if (cell.from > (times[times.length - 1] ?? 0)) {
      // No task ends in the gap before this bucket.
      times.push(cell.from);
      mass.push(0);
      mid.push(cell.from);
    }
    const from = Math.max(cell.from, times[times.length - 1] ?? 0);
    const width = (cell.to - from) / cellSplit;
    if (width <= 0) continue;
    for (let part = 1; part <= cellSplit; part++) {
      times.push(from + part * width);
      mass.push(((1 - tail) * cell.weight) / total / cellSplit);
      mid.push(from + (part - 0.5) * width);
    }
  }
  const longest = times[times.length - 1] ?? 0;
  const reach = withTail ? Math.min(latestMs, longest * tailReach) : longest;
  const beyond = (t: number) => tail * (longest / t) ** alpha;
  for (let a = longest; a < reach; a *= tailGrowth) {
    const b = Math.min(reach, a * tailGrowth);
    times.push(b);
    mass.push(beyond(a) - beyond(b));
    mid.push(Math.sqrt(a * b));
  }
  // What the tail holds past its reach is found at its last time.
  const last = mass.length - 1;
  mass[last] = (mass[last] ?? 0) + beyond(times[last] ?? reach);
  mid[last] = times[last] ?? reach;
  return {
    times: Float64Array.from(times),
    mass: Float64Array.from(mass),
    mid: Float64Array.from(mid),
    tailIndex: alpha,
  };
}

/** A plan over a lattice: from each time a poll found the task running, the best next one. */
export interface PollPlan {
  lattice: TaskLattice;
  priceMs: number;
  /** Share of tasks ended by times[i]. */
  ended: Float64Array;
  /** Sum of mass × mid up to times[i]. */
  endedAt: Float64Array;
  /** Expected cost from times[i] on, times the share still running there. */
  cost: Float64Array;
  /** The next poll's index after a poll at times[i] found the task running. */
  next: Int32Array;
  /** Expected polls from times[i] on, times the share still running there. */
  polls: Float64Array;
}

/** The plan that minimizes expected delay + `priceMs` × expected polls, from every lattice time. */
export function planPolls(lattice: TaskLattice, priceMs: number): PollPlan {
  const { times, mass, mid } = lattice;
  const size = times.length;
  const ended = new Float64Array(size);
  const endedAt = new Float64Array(size);
  for (let i = 1; i < size; i++) {
    ended[i] = (ended[i - 1] ?? 0) + (mass[i] ?? 0);
    endedAt[i] = (endedAt[i - 1] ?? 0) + (mass[i] ?? 0) * (mid[i] ?? 0);
  }
  const cost = new Float64Array(size);
  const next = new Int32Array(size).fill(size - 1);
  const polls = new Float64Array(size);
  for (let i = size - 2; i >= 0; i--) {
    const running = 1 - (ended[i] ?? 0);
    if (running <= 1e-12) continue;
    const best = bestNext(lattice, ended, endedAt, cost, ended[i] ?? 0, endedAt[i] ?? 0, i + 1);
    next[i] = best.index;
    cost[i] = priceMs * running + best.cost;
    polls[i] = running + (polls[best.index] ?? 0);
  }
  return { lattice, priceMs, ended, endedAt, cost, next, polls };
}

/**
 * The best next poll index from `from` on, for a task whose ended share and mass × mid so far are
 * `endedBefore` and `endedAtBefore`: the delay of the tasks it catches plus the plan's cost after it.
 */
function bestNext(
  lattice: TaskLattice,
  ended: Float64Array,
  endedAt: Float64Array,
  cost: Float64Array,
  endedBefore: number,
  endedAtBefore: number,
  from: number,
): { index: number; cost: number } {
  const times = lattice.times;
  let index = times.length - 1;
  let best = Number.POSITIVE_INFINITY;
  for (let j = from; j < times.length; j++) {
    const delay = ((ended[j] ?? 0) - endedBefore) * (times[j] ?? 0) - ((endedAt[j] ?? 0) - endedAtBefore);
    // The delay of the caught tasks only grows with a later poll, and what follows costs >= 0.
    if (delay >= best) break;
    const total = delay + (cost[j] ?? 0);
    if (total < best) {
      best = total;
      index = j;
    }
  }
  return { index, cost: best };
}

/**
 * The planned time (ms from the task's start) of the next poll of a task a poll last found running
 * at `runningAtMs` (0: none yet), no earlier than `elapsedMs` (now). Undefined past the lattice.
 */
export function plannedPollAt(plan: PollPlan, runningAtMs: number, elapsedMs: number): number | undefined {
  const times = plan.lattice.times;
  const state = stateAt(plan, runningAtMs);
  if (state === undefined) return undefined;
  let from = state.cell;
  const earliest = Math.max(elapsedMs, runningAtMs + 1);
  while (from < times.length && (times[from] ?? 0) < earliest) from++;
  if (from >= times.length) return undefined;
  const best = bestNext(plan.lattice, plan.ended, plan.endedAt, plan.cost, state.ended, state.endedAt, from);
  return times[best.index];
}

/** The share ended and mass × mid up to `atMs` (inside a cell, pro rata), and the cell after it. */
function stateAt(
  plan: PollPlan,
  atMs: number,
): { cell: number; ended: number; endedAt: number; running: number } | undefined {
  const { times, mass } = plan.lattice;
  if (atMs <= 0) return { cell: 1, ended: 0, endedAt: 0, running: 1 };
  let cell = 1;
  while (cell < times.length && (times[cell] ?? 0) < atMs) cell++;
  if (cell >= times.length) return undefined;
  const start = times[cell - 1] ?? 0;
  const end = times[cell] ?? atMs;
  const beyond = ((mass[cell] ?? 0) * (end - atMs)) / Math.max(1e-9, end - start);
  const ended = (plan.ended[cell] ?? 0) - beyond;
  const endedAt = (plan.endedAt[cell] ?? 0) - beyond * ((atMs + end) / 2);
  const running = 1 - ended;
  return running > 1e-12 ? { cell, ended, endedAt, running } : undefined;
}

/**
 * How long a task still running at `runningAtMs` runs on average (its expected end minus that
 * time), by the lattice (its tail included). Undefined when the lattice puts no task past it.
 */
export function residualMs(lattice: TaskLattice, runningAtMs: number): number | undefined {
  const { times, mass, mid } = lattice;
  let running = 0;
  let sum = 0;
  for (let cell = 1; cell < times.length; cell++) {
    const end = times[cell] ?? 0;
    if (end <= runningAtMs) continue;
    const start = Math.max(times[cell - 1] ?? 0, runningAtMs);
    const share = ((mass[cell] ?? 0) * (end - start)) / Math.max(1e-9, end - (times[cell - 1] ?? 0));
    running += share;
    sum += share * (start === (times[cell - 1] ?? 0) ? (mid[cell] ?? 0) : (start + end) / 2);
  }
  return running > 1e-12 ? sum / running - runningAtMs : undefined;
}

/** Expected polls per task (from its start) under a plan. */
export function expectedPolls(plan: PollPlan): number {
  return plan.polls[0] ?? 1;
}

/** Expected delay per task (from its end to the poll that finds it ended) under a plan, ms. */
export function expectedDelay(plan: PollPlan): number {
  return Math.max(0, (plan.cost[0] ?? 0) - plan.priceMs * expectedPolls(plan));
}

/** What a task's plan may spend: polls on average, or delay on average (ms). */
export type PlanTarget = { pollsPerTask: number } | { delayMs: number };

/**
 * The price (ms of a job's time a call is worth) at which a task's plan meets its target: at most
 * `pollsPerTask` polls on average (the least price that does), or at most `delayMs` of delay (the
 * greatest). Bisection on the price's logarithm, from 1 ms to a day.
 */
export function priceFor(lattice: TaskLattice, target: PlanTarget): number {
  const meets = (price: number) => {
    const plan = planPolls(lattice, price);
    return 'pollsPerTask' in target
      ? expectedPolls(plan) <= target.pollsPerTask
      : expectedDelay(plan) <= target.delayMs;
  };
  // The polls fall and the delay grows with the price.
  let low = 0;
  let high = Math.log(latestMs);
  if ('pollsPerTask' in target) {
    if (meets(1)) return 1;
  } else if (meets(latestMs)) return latestMs;
  for (let round = 0; round < 14; round++) {
    const middle = (low + high) / 2;
    if (meets(Math.exp(middle)) === 'pollsPerTask' in target) high = middle;
    else low = middle;
  }
  if (!('pollsPerTask' in target)) return Math.exp(low);
  // Plans on a lattice are discrete: the expected polls can jump at a price (a second poll of the
  // bulk added or not). Of the plans on either side of the jump, the one nearer the target.
  const over = expectedPolls(planPolls(lattice, Math.exp(low))) - target.pollsPerTask;
  const under = target.pollsPerTask - expectedPolls(planPolls(lattice, Math.exp(high)));
  return Math.exp(over < under ? low : high);
}

/**
 * Plans by what a plan is made of (the sketch's weights, its total weight and the observations the
 * tail index is read from), target and extra price: a few hundred at most, oldest dropped. Keyed by
 * content, not by the sketch's count and time: two operations' sketches (or two scopes' of one
 * operation) recorded as often, in the same millisecond, with the same last poll, are different
 * distributions, and sketches of the same content share one plan.
 */
const plans = new Map<string, PollPlan | null>();
const keptPlans = 256;

/** What a sketch's plan depends on, as text: its weights by bucket, its total weight, its observations. */
function planContent(sketch: DurationSketch): string {
  const weights = Object.entries(sketch.w)
    .filter(([, weight]) => weight > 0)
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([bucket, weight]) => `${bucket}:${weight}`)
    .join(',');
  return `${weights}|${sketch.n}|${(sketch.obs ?? []).join(',')}`;
}

/**
 * The cached plan for a sketch: at the price where a task meets `target`, plus `extraPriceMs`
 * (what the key's saturated budget adds to a call's worth). A delay target is taken on a grid of
 * steps of 19 % (so plans are shared). Undefined: an empty sketch.
 */
export function sketchPlan(
  sketch: DurationSketch,
  target: PlanTarget,
  extraPriceMs = 0,
): PollPlan | undefined {
  const rounded: PlanTarget =
    'pollsPerTask' in target
      ? target
      : { delayMs: 2 ** (Math.round(4 * Math.log2(Math.max(1, target.delayMs))) / 4) };
  const aim = 'pollsPerTask' in rounded ? `p${rounded.pollsPerTask}` : `d${rounded.delayMs}`;
  const key = `${planContent(sketch)}|${aim}|${Math.round(extraPriceMs)}`;
  const cached = plans.get(key);
  if (cached !== undefined) return cached ?? undefined;
  // A polls target is priced on the tasks like those seen (the tail's polls, spent only by a task
  // past them all, would take the allowance from the bulk); a delay target on every task, the
  // tail's included (their delay is the job's too). The plan covers the tail at that price.
  const lattice = taskLattice(sketch);
  const priced = 'pollsPerTask' in rounded ? taskLattice(sketch, false) : lattice;
  const plan = lattice && priced ? planPolls(lattice, priceFor(priced, rounded) + extraPriceMs) : null;
  if (plans.size >= keptPlans) {
    const oldest = plans.keys().next().value;
    if (oldest !== undefined) plans.delete(oldest);
  }
  plans.set(key, plan);
  return plan ?? undefined;
}

/**
 * When to poll next, in milliseconds from now. `elapsedMs` is the time since the task started,
 * `lastPollAtMs` when (from its start) a poll last found it running (0 for none). With no sketch the
 * declared schedule (`declaredDelayMs`) is used: it is only the prior (a step later with
 * `awaitSample`). Otherwise the plan of the
 * sketch at the price where a task meets `target` (polls or delay on average), plus `extraPriceMs`
 * (see `sketchPlan`). The declared `maxDelayMs` does not cap a learned delay (it is part of the same
 * prior: a schedule 10 times too fast also caps its delays 10 times too low); the give-up time does.
 */
export function learnedPollDelay(options: {
  sketch: DurationSketch | undefined;
  policy: PollPolicy;
  declaredDelayMs: number;
  elapsedMs: number;
  lastPollAtMs: number;
  target: PlanTarget;
  extraPriceMs?: number | undefined;
  /**
   * With no sketch: leave this look to the probes of a batch and poll a step later on the declared
   * schedule (the delay after `declaredDelayMs` added; admission/poll-price.ts, `sharesProbes`).
   */
  awaitSample?: boolean | undefined;
}): number {
  const { sketch, policy, declaredDelayMs, elapsedMs, lastPollAtMs } = options;
  if (!sketch || sketch.count === 0) {
    if (!options.awaitSample) return declaredDelayMs;
    return Math.round(declaredDelayMs + Math.min(policy.maxDelayMs, declaredDelayMs * policy.factor));
  }
  const plan = sketchPlan(sketch, options.target, options.extraPriceMs ?? 0);
  const at = plan && plannedPollAt(plan, lastPollAtMs, elapsedMs);
  // Past the lattice's reach (a thousand times the longest task seen): the tail's own step.
  const learned = at === undefined ? Math.max(250, (tailGrowth - 1) * elapsedMs) : at - elapsedMs;
  return Math.round(
    Math.min(Math.max(policy.maxDelayMs, policy.giveUpAfterMs - elapsedMs), Math.max(50, learned)),
  );
}

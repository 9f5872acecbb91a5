import { describe, expect, it } from 'vitest';
import {
  type DurationSketch,
  defaultPollAllowance,
  emptySketch,
  expectedDelay,
  expectedPolls,
  plannedPollAt,
  planPolls,
  pollPrice,
  priceFor,
  recordDuration,
  residualMs,
  sketchPlan,
  slackOf,
  tailIndex,
  taskLattice,
} from '../../../shared/engine';
import { demo } from './fixtures';

/** Tasks of these times, each seen exactly. */
function sketchOf(durations: number[]): DurationSketch {
  let sketch = emptySketch(0);
  for (const [i, ms] of durations.entries()) sketch = recordDuration(sketch, ms, ms, i);
  return sketch;
}

/** n quantiles of a distribution (its inverse CDF), in a shuffled order. */
const quantiles = (n: number, inverse: (p: number) => number) =>
  Array.from({ length: n }, (_, i) => inverse(((i * 17) % n) / n + 0.5 / n));
const uniform = sketchOf(quantiles(48, (p) => 1_000 + 2_000 * p));
const pareto = sketchOf(quantiles(48, (p) => 1_000 / (1 - p) ** (1 / 1.5)));

describe('poll plans', () => {
  it('estimates the tail index: heavy for a Pareto upstream, thin for bounded times', () => {
    expect(tailIndex(pareto)!).toBeGreaterThan(1);
    expect(tailIndex(pareto)!).toBeLessThan(3);
    expect(tailIndex(uniform)!).toBeGreaterThan(8);
    expect(tailIndex(sketchOf([2_000]))).toBeUndefined();
  });

  it('finds the price that spends the polls asked for, and spends fewer as the price rises', () => {
    const lattice = taskLattice(uniform)!;
    const cheap = planPolls(lattice, 50);
    const dear = planPolls(lattice, 5_000);
    expect(expectedPolls(cheap)).toBeGreaterThan(expectedPolls(dear));
    expect(expectedDelay(cheap)).toBeLessThan(expectedDelay(dear));
    for (const pollsPerTask of [1.2, 1.5, 2.5]) {
      const plan = planPolls(lattice, priceFor(lattice, { pollsPerTask }));
      expect(Math.abs(expectedPolls(plan) - pollsPerTask)).toBeLessThan(0.35);
    }
    // A delay target: the fewest polls within it.
    const within = planPolls(lattice, priceFor(lattice, { delayMs: 300 }));
    expect(expectedDelay(within)).toBeLessThanOrEqual(300);
  });

  it('polls a task past everything seen on a geometric schedule, wider steps for a heavier tail', () => {
    const step = (sketch: DurationSketch, atMs: number) => {
      const plan = sketchPlan(sketch, { pollsPerTask: 1.5 })!;
      return (plannedPollAt(plan, atMs, atMs) ?? 0) / atMs;
    };
    // Past the longest seen (3 s; Pareto: far out), each poll a share of the time run later.
    expect(step(uniform, 6_000)).toBeGreaterThan(1);
    expect(step(uniform, 6_000)).toBeLessThan(1.5);
    expect(step(pareto, 200_000)).toBeGreaterThan(1);
  });

  it('plans by what a sketch holds: sketches alike in count, time and last task do not share a plan', () => {
    // Two operations, each with two tasks recorded at the same times, the last of each 3 s long.
    let short = emptySketch(0);
    let long = emptySketch(0);
    for (const [i, [a, b]] of [
      [1_000, 40_000],
      [3_000, 3_000],
    ].entries()) {
      short = recordDuration(short, a ?? 0, a ?? 0, i);
      long = recordDuration(long, b ?? 0, b ?? 0, i);
    }
    expect([short.count, short.updatedAt, short.n, short.obs?.at(-1)]).toEqual([
      long.count,
      long.updatedAt,
      long.n,
      long.obs?.at(-1),
    ]);
    const target = { pollsPerTask: 1.5 };
    const first = (sketch: DurationSketch) => plannedPollAt(sketchPlan(sketch, target)!, 0, 0)!;
    const uncached = (sketch: DurationSketch) => {
      const plan = planPolls(taskLattice(sketch)!, priceFor(taskLattice(sketch, false)!, target));
      return plannedPollAt(plan, 0, 0)!;
    };
    expect(first(short)).toBe(uncached(short));
    expect(first(long)).toBe(uncached(long));
    expect(first(long)).not.toBe(first(short));
    // The same content (a copy read again from the store) shares the plan.
    expect(sketchPlan(structuredClone(long), target)).toBe(sketchPlan(long, target));
  });

  it("expects a heavy-tailed task's rest to grow with the time it has run, a bounded one's to shrink", () => {
    expect(residualMs(taskLattice(pareto)!, 10_000)!).toBeGreaterThan(
      residualMs(taskLattice(pareto)!, 2_000)!,
    );
    expect(residualMs(taskLattice(uniform)!, 2_500)!).toBeLessThan(residualMs(taskLattice(uniform)!, 0)!);
  });
});

describe('poll prices', () => {
  const recommend = demo.steps.find((step) => step.poll !== undefined)!;
  const base = {
    workflow: demo,
    step: recommend,
    sketch: uniform,
    meanOf: () => 2_000,
    runningAtMs: 0,
    ratePerSecond: 5,
    saturated: false,
    now: 10_000,
    allowance: defaultPollAllowance,
  };

  it("spends a lone job's allowance in calls", () => {
    const lone = {
      callsLeft: 3,
      drainMs: 600,
      longestChainMs: 2_600,
      endMs: 2_600,
      jobs: 1,
      countedAt: 10_000,
    };
    expect(pollPrice({ ...base, work: lone }).target).toHaveProperty('pollsPerTask');
    // Nothing counted (aws): no slack assumed.
    expect(pollPrice({ ...base, work: undefined }).target).toHaveProperty('pollsPerTask');
  });

  it('spends the slack of a job the key does not wait for in delay, less as the count ages', () => {
    const batch = {
      callsLeft: 300,
      drainMs: 60_000,
      longestChainMs: 4_000,
      endMs: 60_000,
      jobs: 100,
      countedAt: 10_000,
    };
    const { slackMs } = slackOf({ ...base, work: batch }, 200);
    expect(slackMs).toBeGreaterThan(50_000);
    expect(pollPrice({ ...base, work: batch }).target).toHaveProperty('delayMs');
    expect(slackOf({ ...base, now: 15_000, work: batch }, 200).slackMs).toBeCloseTo(slackMs - 5_000, 0);
    // A `high` job's own time is what its user waits for: no slack, it spends its call allowance.
    expect(slackOf({ ...base, work: batch, priority: 'high' }, 200).slackMs).toBe(0);
    expect(pollPrice({ ...base, work: batch, priority: 'high' }).target).toHaveProperty('pollsPerTask');
    expect(slackOf({ ...base, work: batch, priority: 'low' }, 200).slackMs).toBe(slackMs);
  });

  it('leaves the first look at an operation nothing is known of to the probes, where the filler counts the key', () => {
    const counted = { callsLeft: 300, drainMs: 60_000, longestChainMs: 4_000, jobs: 100, countedAt: 10_000 };
    expect(pollPrice({ ...base, sketch: undefined, work: counted }).awaitSample).toBe(true);
    expect(pollPrice({ ...base, sketch: emptySketch(0), work: counted }).awaitSample).toBe(true);
    // Once a task has ended, the plan aims; where nothing counts the key (aws), the declared schedule.
    expect(pollPrice({ ...base, work: counted }).awaitSample).toBe(false);
    expect(pollPrice({ ...base, sketch: undefined, work: undefined }).awaitSample).toBe(false);
  });

  it('adds a token interval per call waiting to the price while the budget is saturated', () => {
    expect(pollPrice({ ...base, work: undefined, saturated: true, waiting: 4 }).extraPriceMs).toBe(800);
    expect(pollPrice({ ...base, work: undefined }).extraPriceMs).toBe(0);
  });
});

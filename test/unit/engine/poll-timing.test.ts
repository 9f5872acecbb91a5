import { describe, expect, it } from 'vitest';
import {
  conditionalQuantile,
  type DurationSketch,
  doneShare,
  durationSketchSchema,
  emptySketch,
  keptObservations,
  learnedPollDelay,
  type PollStatsStore,
  recordDuration,
  sketchDecay,
  sketchMean,
  submitJob,
} from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

const policy = { firstDelayMs: 10_000, factor: 2, maxDelayMs: 40_000, giveUpAfterMs: 600_000 };
/** The plan's target in these tests: 1.5 polls per task on average. */
const target = { pollsPerTask: 1.5 };

function sketchOf(durations: number[]): DurationSketch {
  let sketch = emptySketch(0);
  for (const ms of durations) sketch = recordDuration(sketch, ms, ms, 0);
  return sketch;
}

describe('duration sketch', () => {
  it('finds quantiles of what it saw, within a bucket (20 %)', () => {
    // 1.00 .. 2.98 s, in a shuffled order (the sketch weighs recent tasks more)
    const durations = Array.from({ length: 100 }, (_, i) => 1_000 + ((i * 37) % 100) * 20);
    const sketch = sketchOf(durations);
    expect(conditionalQuantile(sketch, 0.5)!).toBeGreaterThan(1_700);
    expect(conditionalQuantile(sketch, 0.5)!).toBeLessThan(2_300);
    expect(conditionalQuantile(sketch, 0.95)!).toBeGreaterThan(2_500);
    expect(conditionalQuantile(sketch, 0.95)!).toBeLessThan(3_600);
    // Conditioned on still running at 2.5 s, the median is later than 2.5 s.
    expect(conditionalQuantile(sketch, 0.5, 2_500)!).toBeGreaterThan(2_500);
    expect(doneShare(sketch, 10_000)).toBeCloseTo(1, 5);
    expect(doneShare(sketch, 500)).toBeCloseTo(0, 5);
  });

  it('finds the mean of what it saw, far above the median on a skewed upstream', () => {
    expect(sketchMean(emptySketch(0))).toBeUndefined();
    // Evenly 1.00 .. 2.98 s: mean and median both near 2 s.
    const even = sketchOf(Array.from({ length: 48 }, (_, i) => 1_000 + ((i * 37) % 48) * 42));
    expect(sketchMean(even)!).toBeGreaterThan(1_800);
    expect(sketchMean(even)!).toBeLessThan(2_200);
    // Most tasks 1 s, one in six 20 s: the median stays near 1 s, the mean is about 4.2 s.
    const skewed = sketchOf(Array.from({ length: 48 }, (_, i) => (i % 6 === 5 ? 20_000 : 1_000)));
    expect(conditionalQuantile(skewed, 0.5)!).toBeLessThan(1_300);
    expect(sketchMean(skewed)!).toBeGreaterThan(3_500);
    expect(sketchMean(skewed)!).toBeLessThan(5_000);
  });

  it('spreads an interval observation over the interval, and forgets the old slowly', () => {
    const wide = recordDuration(emptySketch(0), 1_000, 9_000, 0);
    expect(conditionalQuantile(wide, 0.5)!).toBeGreaterThan(4_000);
    expect(conditionalQuantile(wide, 0.5)!).toBeLessThan(6_000);
    // The upstream got 10 times slower: after a few dozen tasks the estimate follows.
    let sketch = sketchOf(Array(50).fill(1_000));
    for (let i = 0; i < 60; i++) sketch = recordDuration(sketch, 10_000, 10_000, 0);
    expect(conditionalQuantile(sketch, 0.5)!).toBeGreaterThan(8_000);
    expect(sketch.n).toBeLessThan(1 / (1 - sketchDecay) + 1);
    // The last 48 intervals and the weights: well under a DynamoDB item's or a row's worry.
    expect(sketch.obs?.length).toBe(2 * keptObservations);
    expect(JSON.stringify(sketch).length).toBeLessThan(1_000);
  });

  it('puts a wrong prior\'s "done by" where later, narrower intervals say tasks end', () => {
    // A schedule 10 times too slow: the first polls find 1-3 s tasks done at 20, 12, 7 and 4 s;
    // then polls come near 2 s and some find the task running.
    let sketch = emptySketch(0);
    const seen: [number, number][] = [
      [0, 20_000],
      [0, 12_000],
      [0, 7_000],
      [0, 4_000],
      [1_500, 2_100],
      [1_200, 1_700],
      [0, 2_000],
      [1_600, 2_300],
    ];
    for (const [lower, upper] of seen) sketch = recordDuration(sketch, lower, upper, 0);
    // Spread evenly over themselves, the early "done by 20 s" kept the 0.9 quantile above 8 s.
    expect(conditionalQuantile(sketch, 0.9)!).toBeLessThan(2_500);
    expect(conditionalQuantile(sketch, 0.5)!).toBeGreaterThan(1_200);
    // Each interval still bounds the estimate: nothing ends before the narrow ones' lower bounds.
    expect(doneShare(sketch, 1_000)!).toBeLessThan(0.05);
  });

  it('reads a sketch written before the intervals were kept, and starts keeping them at its next record', () => {
    const old = durationSketchSchema.parse({ w: { '10': 3, '11': 2 }, n: 5, count: 5, updatedAt: 0 });
    expect(conditionalQuantile(old, 0.5)).toBeGreaterThan(500);
    const next = recordDuration(old, 0, 2_000, 1);
    expect(next.obs).toEqual([0, 2_000]);
    expect(next.count).toBe(6);
    // The new interval alone: done by 2 s, but for what the smoothing moves one bucket (20 %) on.
    expect(doneShare(next, 2_000)).toBeGreaterThan(0.95);
    expect(doneShare(next, 2_000 * 1.2 ** 2)).toBeCloseTo(1, 5);
  });

  it('keeps a share of a "done by then" below the poll time, so a job polled near one time does not confirm its own estimate', () => {
    // A first task probed once a second ended between 4 and 5 s; the next two were found done at
    // their first poll, at 4.34 s. Turnbull's estimate alone puts 95 % of them between 3.6 and 4.34 s.
    let sketch = recordDuration(emptySketch(0), 4_000, 5_000, 0);
    for (let i = 0; i < 2; i++) sketch = recordDuration(sketch, 0, 4_340, i + 1);
    expect(doneShare(sketch, 4_340)!).toBeGreaterThan(0.6);
    // Some of it below the bucket of the poll time: where the next plan looks, and learns.
    expect(doneShare(sketch, 3_600)!).toBeGreaterThan(0.1);
    expect(doneShare(sketch, 3_600)!).toBeLessThan(0.5);
  });

  it('aims a poll at the quantile, using the declared schedule only before any task was seen', () => {
    const sketch = sketchOf(Array(20).fill(2_000));
    const delay = learnedPollDelay({
      sketch,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(delay).toBeGreaterThan(1_700);
    expect(delay).toBeLessThan(2_400);
    const none = learnedPollDelay({
      sketch: undefined,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(none).toBe(10_000);
    // Left to a batch's probes: a step later on the declared schedule, until a task has ended.
    const waits = { sketch: undefined, policy, elapsedMs: 0, lastPollAtMs: 0, target, awaitSample: true };
    expect(learnedPollDelay({ ...waits, declaredDelayMs: 10_000 })).toBe(
      10_000 + Math.min(policy.maxDelayMs, 10_000 * policy.factor),
    );
    expect(learnedPollDelay({ ...waits, sketch, declaredDelayMs: 10_000 })).toBe(delay);
    const one = learnedPollDelay({
      sketch: sketchOf([2_000]),
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(one).toBeGreaterThan(1_700);
    expect(one).toBeLessThan(2_400);
  });

  it('is not capped by the declared maxDelayMs (part of the prior), only by the give-up time', () => {
    // Declared 10 times too fast: first look after 100 ms, never more than 400 ms apart.
    const fast = { firstDelayMs: 100, factor: 1.5, maxDelayMs: 400, giveUpAfterMs: 600_000 };
    const sketch = sketchOf(Array(20).fill(2_000));
    const delay = learnedPollDelay({
      sketch,
      policy: fast,
      declaredDelayMs: 100,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(delay).toBeGreaterThan(1_700);
    expect(delay).toBeLessThan(2_400);
    const nearGiveUp = learnedPollDelay({
      sketch,
      policy: { ...fast, giveUpAfterMs: 1_000 },
      declaredDelayMs: 100,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(nearGiveUp).toBe(1_000);
  });
});

describe('polls after one that found the task running', () => {
  // Tasks seen: 1 to 3 s, most near 1 s (as the sandbox's skewed draw).
  const seen = sketchOf(Array.from({ length: 40 }, (_, i) => 1_000 + (2_000 * ((i * 7) % 40) ** 2) / 1_600));

  it('follow the plan from the time a poll found the task running, never a storm of polls', () => {
    // Running at 2.7 s: few tasks seen took longer, all by 2.9 s.
    const delay = learnedPollDelay({
      sketch: seen,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 2_700,
      lastPollAtMs: 2_700,
      target,
    });
    expect(delay).toBeGreaterThan(100);
    // The first poll comes where the bulk of the tasks end.
    const first = learnedPollDelay({
      sketch: seen,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      target,
    });
    expect(first).toBeGreaterThan(1_200);
    expect(first).toBeLessThan(2_400);
  });

  it('past everything seen, space out with the time run, whatever the declared schedule', () => {
    const delays = [100, 60_000].map((declaredDelayMs) =>
      learnedPollDelay({
        sketch: seen,
        policy,
        declaredDelayMs,
        elapsedMs: 8_000,
        lastPollAtMs: 8_000,
        target,
      }),
    );
    expect(delays[0]).toBe(delays[1]);
    expect(delays[0]).toBeGreaterThanOrEqual(0.05 * 8_000);
    const later = learnedPollDelay({
      sketch: seen,
      policy: { ...policy, giveUpAfterMs: 3_600_000 },
      declaredDelayMs: 10_000,
      elapsedMs: 40_000,
      lastPollAtMs: 40_000,
      target,
    });
    // On the tail's lattice (20 % steps): the next poll within a step of the time run.
    expect(later).toBeGreaterThan(0);
    expect(later).toBeLessThanOrEqual(0.2 * 40_000 + 1);
  });

  it('bound the polls of a task far longer than any seen by the log of its time', () => {
    let elapsed = 0;
    let last = 0;
    let polls = 0;
    while (elapsed < 60_000) {
      elapsed += learnedPollDelay({
        sketch: seen,
        policy: { ...policy, giveUpAfterMs: 3_600_000 },
        declaredDelayMs: 10_000,
        elapsedMs: elapsed,
        lastPollAtMs: last,
        target,
      });
      last = elapsed;
      polls++;
    }
    // Geometric: past the 3 s seen, at most one poll per lattice step of 20 % (16 to 60 s).
    expect(polls).toBeLessThan(Math.log(60 / 3) / Math.log(1.2) + 6);
  });
});

class MemoryPollStats implements PollStatsStore {
  readonly sketches = new Map<string, DurationSketch>();
  async load(keys: readonly string[]) {
    return new Map(keys.flatMap((key) => (this.sketches.has(key) ? [[key, this.sketches.get(key)!]] : [])));
  }
  async record(key: string, lower: number, upper: number, now: number) {
    this.sketches.set(key, recordDuration(this.sketches.get(key) ?? emptySketch(now), lower, upper, now));
  }
}

describe('the runner with learned poll timing', () => {
  it('learns how long the task takes and stops polling on the declared (too slow) schedule', async () => {
    const stats = new MemoryPollStats();
    // The recommendation is ready 2 s after the create; the schedule looks first after 10 s.
    const h = harness(undefined, { pollStats: stats, pollStatsScope: 'http://upstream.test' });
    let createdAt = 0;
    h.client.script = (op, body, key) => {
      if (op === 'ai33-1Step1V3') createdAt = h.clock.now();
      if (op === 'ai33-2Step2V3' && h.clock.now() - createdAt < 2_000) return { status: 'RUNNING' };
      return happyScript(0)(op, body, key);
    };
    const spans: number[] = [];
    for (let i = 0; i < 8; i++) {
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: `issue ${i}` } });
      const t0 = h.clock.now();
      await drive(h.deps, h.queue, h.clock);
      const done = (await h.store.get(job.id))!;
      expect(done.status).toBe('SUCCEEDED');
      spans.push(done.finishedAt! - t0);
    }
    expect(spans[0]).toBe(10_000);
    // Once learned, the first poll lands near 2 s and finds the task done.
    expect(spans.at(-1)!).toBeLessThan(3_000);
    expect(spans.at(-1)!).toBeGreaterThanOrEqual(2_000);
    const [sketch] = stats.sketches.values();
    expect(sketch?.count).toBe(8);
    expect(JSON.stringify(sketch).length).toBeLessThan(1_000);
  });
});

describe('late polls', () => {
  it('do not drag the estimate later: "done by then" goes where tasks are known to end', () => {
    // Tasks end near 2 s (polls that found them running just before).
    let sketch = emptySketch(0);
    for (let i = 0; i < 20; i++) sketch = recordDuration(sketch, 1_900, 2_100, 0);
    // Then, under a saturated budget, polls come late and only learn "done by 8 s".
    for (let i = 0; i < 20; i++) sketch = recordDuration(sketch, 0, 8_000, 0);
    expect(conditionalQuantile(sketch, 0.5)!).toBeLessThan(2_600);
  });

  it('do not ratchet the estimate up when every poll finds its task done (a saturated batch of 300)', () => {
    // Tasks take 2 s. The key is saturated: each poll is planned at the saturated price (40 calls
    // waiting at 5/s), finds its task done, and waits 2 s for its token, so each task teaches only
    // "done by its poll". The first polls came after 6 s (the declared schedule and the line).
    let sketch = emptySketch(0);
    for (let i = 0; i < keptObservations; i++) sketch = recordDuration(sketch, 0, 6_000, i);
    const plannedFirstPoll = () =>
      learnedPollDelay({
        sketch,
        policy,
        declaredDelayMs: 1_000,
        elapsedMs: 0,
        lastPollAtMs: 0,
        target,
        extraPriceMs: 40 * 200,
      });
    const planned: number[] = [];
    for (let task = 0; task < 3 * keptObservations; task++) {
      const pollAt = plannedFirstPoll();
      planned.push(pollAt);
      // Found done at its poll (a 2 s task is done by then), or, polled before 2 s, found running.
      const calledAt = pollAt + 2_000;
      sketch =
        pollAt >= 2_000
          ? recordDuration(sketch, 0, calledAt, task)
          : recordDuration(sketch, pollAt, Math.max(2_000, pollAt + 2_000), task);
    }
    // Spread over time, "done by 6 s" says tasks take about 3 s: the plan polls near 6 s, the token
    // wait makes it "done by 8 s", and so on (on 2075607 the planned poll climbs 5.5, 6.6, 8.0, 9.5 s
    // by the last of these tasks, and 11.4 s after twice as many; in the bench's 300-job batch, with
    // token waits of 10 to 40 s, past a minute).
    expect(Math.max(...planned.slice(-keptObservations))).toBeLessThan(8_000);
  });
});

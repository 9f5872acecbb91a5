import { describe, expect, it } from 'vitest';
import {
  conditionalQuantile,
  currentSketch,
  type DurationSketch,
  doneShare,
  durationSketchSchema,
  emptySketch,
  keptObservations,
  keptRunning,
  learnedPollDelay,
  minPollGapShare,
  type PollStatsStore,
  recordDuration,
  recordRunning,
  runningEntryTtlMs,
  runningTeaches,
  sketchDecay,
  submitJob,
  tailPollGapShare,
  withRunning,
} from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

const policy = { firstDelayMs: 10_000, factor: 2, maxDelayMs: 40_000, giveUpAfterMs: 600_000 };

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
    expect(doneShare(next, 2_000)).toBeCloseTo(1, 5);
  });

  it('aims a poll at the quantile, using the declared schedule only before any task was seen', () => {
    const sketch = sketchOf(Array(20).fill(2_000));
    const delay = learnedPollDelay({
      sketch,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      quantile: 0.9,
    });
    expect(delay).toBeGreaterThan(1_700);
    expect(delay).toBeLessThan(2_400);
    const none = learnedPollDelay({
      sketch: undefined,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      quantile: 0.9,
    });
    expect(none).toBe(10_000);
    const one = learnedPollDelay({
      sketch: sketchOf([2_000]),
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      quantile: 0.9,
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
      quantile: 0.9,
    });
    expect(delay).toBeGreaterThan(1_700);
    expect(delay).toBeLessThan(2_400);
    const nearGiveUp = learnedPollDelay({
      sketch,
      policy: { ...fast, giveUpAfterMs: 1_000 },
      declaredDelayMs: 100,
      elapsedMs: 0,
      lastPollAtMs: 0,
      quantile: 0.9,
    });
    expect(nearGiveUp).toBe(1_000);
  });
});

/** Records each look that found a task running, as the runner does: only when it can change aims. */
function running(sketch: DurationSketch, looks: [task: string, ageMs: number][], now = 0): DurationSketch {
  let next = sketch;
  for (const [task, ageMs] of looks) next = recordRunning(next, task, ageMs, now) ?? next;
  return next;
}

const delayOf = (sketch: DurationSketch | undefined, elapsedMs: number, declaredDelayMs: number) =>
  learnedPollDelay({ sketch, policy, declaredDelayMs, elapsedMs, lastPollAtMs: elapsedMs, quantile: 0.65 });

describe('tasks seen still running (right-censored)', () => {
  it('before any task finished, hold every poll back to the longest seen running, else the declared schedule', () => {
    // A wave: the first job's task was seen running at 60 s and then at 135 s; another's at 90 s.
    const sketch = running(emptySketch(0), [
      ['job1', 60_000],
      ['job2', 90_000],
      ['job1', 135_000],
    ]);
    expect(sketch.count).toBe(0);
    expect(sketch.run?.map(([task, age]) => [task, age])).toEqual([
      ['job1', 135_000],
      ['job2', 90_000],
    ]);
    // Nothing finished: no task is known done before 135 s (the longest seen running). A new
    // job's first poll, declared at 10 s, comes then.
    expect(delayOf(sketch, 0, 10_000)).toBe(135_000);
    // A job at 60 s: the same place, from its age.
    expect(60_000 + delayOf(sketch, 60_000, 20_000)).toBeGreaterThanOrEqual(135_000);
    // Past the longest seen, or with a declared delay reaching further: the declared schedule.
    expect(delayOf(sketch, 140_000, 40_000)).toBe(40_000);
    expect(delayOf(sketch, 0, 200_000)).toBe(200_000);
    // Without them, the declared schedule as before.
    expect(delayOf(emptySketch(0), 0, 10_000)).toBe(10_000);
  });

  it('only a look longer than every one seen is written while nothing finished', () => {
    const sketch = running(emptySketch(0), [['job1', 135_000]]);
    expect(runningTeaches(undefined, 1_000, 0)).toBe(true);
    expect(runningTeaches(sketch, 90_000, 0)).toBe(false);
    expect(recordRunning(sketch, 'job2', 90_000, 0)).toBeUndefined();
    expect(runningTeaches(sketch, 136_000, 0)).toBe(true);
  });

  it("shift the quantiles later when finished tasks are only the wave's shortest", () => {
    // Three tasks finished near 200 s (the shortest of a wave); five others were seen running at 250 to 290 s.
    const finished = sketchOf([190_000, 200_000, 210_000]);
    let both = finished;
    for (const [task, ageMs] of [
      ['a', 250_000],
      ['b', 260_000],
      ['c', 270_000],
      ['d', 280_000],
      ['e', 290_000],
    ] as const)
      both = withRunning(both, task, ageMs, 0);
    expect(both.count).toBe(3);
    expect(both.run).toHaveLength(5);
    expect(conditionalQuantile(finished, 0.65)!).toBeLessThan(220_000);
    // Five of eight tasks last beyond 250 s: the 0.65 quantile is past it.
    expect(conditionalQuantile(both, 0.65)!).toBeGreaterThan(250_000);
    expect(doneShare(both, 240_000)!).toBeLessThan(0.45);
    // A job that saw its task running at 220 s aims beyond 250 s, not at the finished ones' end.
    expect(220_000 + delayOf(both, 220_000, 1_000)).toBeGreaterThan(250_000);
    // Weights: the finished ones' (decayed) and one for each task running.
    const total = Object.values(both.w).reduce((sum, weight) => sum + weight, 0);
    expect(total).toBeCloseTo(both.n + 5, 2);
    // Written only while they move the aims: the first two did, the next three add nothing.
    const written = running(finished, [
      ['a', 250_000],
      ['b', 260_000],
      ['c', 270_000],
      ['d', 280_000],
      ['e', 290_000],
    ]);
    expect(written.run?.map(([task]) => task)).toEqual(['b', 'a']);
    expect(conditionalQuantile(written, 0.65)!).toBeGreaterThan(250_000);
  });

  it("move onto tasks that finished later, not beyond them (Kaplan-Meier's redistribution)", () => {
    const sketch = withRunning(sketchOf([100_000, 300_000, 300_000]), 'a', 150_000, 0);
    // The task running at 150 s goes with the two that took 300 s: nothing is put past 360 s, and
    // about a quarter of the tasks (the one of 100 s) are done by 150 s.
    expect(doneShare(sketch, 360_000)).toBeCloseTo(1, 3);
    expect(doneShare(sketch, 150_000)!).toBeGreaterThan(0.2);
    expect(doneShare(sketch, 150_000)!).toBeLessThan(0.34);
    // It does not move the aims (0.65 and 0.9 stay near 300 s): not worth a write.
    expect(runningTeaches(sketchOf([100_000, 300_000, 300_000]), 150_000, 0)).toBe(false);
  });

  it('record a look only when it can change aims once tasks have finished', () => {
    const finished = sketchOf(Array.from({ length: 20 }, (_, i) => 200_000 + i * 5_000));
    // A task still running at 250 s, as a share of them are: the estimate knew, nothing to write.
    expect(runningTeaches(finished, 250_000, 0)).toBe(false);
    expect(recordRunning(finished, 'a', 250_000, 0)).toBeUndefined();
    // Beyond every task seen: the estimate is behind.
    expect(runningTeaches(finished, 320_000, 0)).toBe(true);
    expect(recordRunning(finished, 'a', 320_000, 0)?.run).toHaveLength(1);
  });

  it("replace a task's entry at its next look, and remove it when its finished interval comes", () => {
    let sketch = running(emptySketch(0), [['a', 60_000]]);
    sketch = running(sketch, [['a', 90_000]]);
    expect(sketch.run?.map(([task, age]) => [task, age])).toEqual([['a', 90_000]]);
    sketch = running(sketch, [['b', 120_000]]);
    const done = recordDuration(sketch, 90_000, 130_000, 0, 'a');
    expect(done.run?.map(([task]) => task)).toEqual(['b']);
    expect(done.count).toBe(1);
    // No double counting: one finished interval and one running entry weigh two.
    const total = Object.values(done.w).reduce((sum, weight) => sum + weight, 0);
    expect(total).toBeCloseTo(2, 3);
    // Without a task id (or another task's), the entries stay.
    expect(recordDuration(sketch, 0, 50_000, 0).run).toHaveLength(2);
  });

  it('keep at most keptRunning entries, dropping the youngest looks', () => {
    let sketch = emptySketch(0);
    for (let i = 0; i < keptRunning + 5; i++) sketch = recordRunning(sketch, `t${i}`, 10_000 + i * 1_000, 0)!;
    expect(sketch.run).toHaveLength(keptRunning);
    expect(Math.min(...(sketch.run ?? []).map(([, age]) => age))).toBe(10_000 + 5 * 1_000);
    // Still small: a DynamoDB write unit is 1 KB.
    expect(JSON.stringify(sketch).length).toBeLessThan(600);
  });

  it('expire entries of tasks never seen again (cancelled or failed jobs)', () => {
    const t0 = 1_700_000_000_000;
    const sketch = running(emptySketch(t0), [['gone', 100_000]], t0);
    expect(delayOf(sketch, 0, 10_000)).toBeGreaterThanOrEqual(100_000);
    // Within its time to live the entry stands; after it, it is gone from the estimate.
    expect(currentSketch(sketch, t0 + runningEntryTtlMs - 1_000)).toBe(sketch);
    const later = currentSketch(sketch, t0 + runningEntryTtlMs + 1_000);
    expect(later.run).toEqual([]);
    expect(delayOf(later, 0, 10_000)).toBe(10_000);
    // And from the next write, whatever it is.
    const next = recordDuration(sketch, 0, 50_000, t0 + runningEntryTtlMs + 1_000);
    expect(next.run).toEqual([]);
    // A look no longer than the expired one is written again (it is the longest now).
    expect(runningTeaches(sketch, 90_000, t0 + runningEntryTtlMs + 1_000)).toBe(true);
    // A long task's entry lives as long as the task had run.
    const long = running(emptySketch(t0), [['long', 2 * runningEntryTtlMs]], t0);
    expect(currentSketch(long, t0 + runningEntryTtlMs + 1_000)).toBe(long);
  });

  it('reads sketches written before running entries were kept, and adds them at the next look', () => {
    const stored = JSON.parse(JSON.stringify(sketchOf([200_000, 210_000])));
    delete stored.run;
    const old = durationSketchSchema.parse(stored);
    expect(old.run).toBeUndefined();
    expect(currentSketch(old, 1e12)).toBe(old);
    expect(recordDuration(old, 0, 220_000, 1).run).toBeUndefined();
    expect(recordRunning(old, 'a', 400_000, 0)?.run).toHaveLength(1);
    // One from before session 8 (weights, no intervals) cannot take an entry: it is left alone.
    const older = durationSketchSchema.parse({ w: { '10': 3 }, n: 3, count: 3, updatedAt: 0 });
    expect(recordRunning(older, 'a', 400_000, 0)).toBeUndefined();
    // A sketch with entries still parses, and a bad entry is refused.
    const withRun = running(emptySketch(0), [['a', 60_000]]);
    expect(durationSketchSchema.parse(JSON.parse(JSON.stringify(withRun)))).toEqual(withRun);
    expect(durationSketchSchema.safeParse({ ...withRun, run: [['a', -1, 0]] }).success).toBe(false);
  });
});

describe('polls after one that found the task running', () => {
  // Tasks seen: 1 to 3 s, most near 1 s (as the sandbox's skewed draw).
  const seen = sketchOf(Array.from({ length: 40 }, (_, i) => 1_000 + (2_000 * ((i * 7) % 40) ** 2) / 1_600));

  it('come no sooner than a share of the time the task has run, not 50 ms after the last', () => {
    // Running at 2.7 s: few tasks seen took longer, all by 2.9 s; aimed at them alone, the next
    // poll would come 0.3 s later, and the one after sooner still.
    const delay = learnedPollDelay({
      sketch: seen,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 2_700,
      lastPollAtMs: 2_700,
      quantile: 0.65,
    });
    expect(delay).toBe(Math.round(minPollGapShare * 2_700));
    // The first poll is aimed at the quantile alone.
    const first = learnedPollDelay({
      sketch: seen,
      policy,
      declaredDelayMs: 10_000,
      elapsedMs: 0,
      lastPollAtMs: 0,
      quantile: 0.65,
    });
    expect(first).toBeGreaterThan(1_200);
    expect(first).toBeLessThan(2_400);
  });

  it('past everything seen, look again after half the time run, whatever the declared schedule', () => {
    for (const declaredDelayMs of [100, 60_000]) {
      const delay = learnedPollDelay({
        sketch: seen,
        policy,
        declaredDelayMs,
        elapsedMs: 8_000,
        lastPollAtMs: 8_000,
        quantile: 0.65,
      });
      expect(delay).toBe(Math.round(tailPollGapShare * 8_000));
    }
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
        quantile: 0.65,
      });
      last = elapsed;
      polls++;
    }
    expect(polls).toBeLessThan(15);
  });
});

class MemoryPollStats implements PollStatsStore {
  readonly sketches = new Map<string, DurationSketch>();
  async load(keys: readonly string[]) {
    return new Map(keys.flatMap((key) => (this.sketches.has(key) ? [[key, this.sketches.get(key)!]] : [])));
  }
  async record(key: string, lower: number, upper: number, now: number, task?: string) {
    this.sketches.set(
      key,
      recordDuration(this.sketches.get(key) ?? emptySketch(now), lower, upper, now, task),
    );
  }
  async recordRunning(key: string, task: string, ageMs: number, now: number) {
    const next = recordRunning(this.sketches.get(key) ?? emptySketch(now), task, ageMs, now);
    if (next) this.sketches.set(key, next);
    return next !== undefined;
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
  it('teaches a job started later in a wave what the earlier one saw running (and forgets it once done)', async () => {
    const stats = new MemoryPollStats();
    const h = harness(undefined, { pollStats: stats, pollStatsScope: 'http://upstream.test' });
    // Every recommendation runs 100 s from its create; the schedule looks after 10, 30, 70, 110 s.
    const createdAt = new Map<string, number>();
    const looks = new Map<string, number[]>();
    h.client.script = (op, body, key) => {
      if (op === 'ai33-1Step1V3') {
        const taskId = `task-${createdAt.size + 1}`;
        createdAt.set(taskId, h.clock.now());
        return { task_id: taskId };
      }
      if (op === 'ai33-2Step2V3') {
        const taskId = String((body as { task_id: string }).task_id);
        const age = h.clock.now() - (createdAt.get(taskId) ?? 0);
        looks.set(taskId, [...(looks.get(taskId) ?? []), age]);
        if (age < 100_000) return { status: 'RUNNING' };
      }
      return happyScript(0)(op, body, key);
    };
    const first = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'first' } });
    // The first job's task is seen running at 10, 30 and 70 s; then the second job starts.
    await drive(h.deps, h.queue, h.clock, {
      until: (jobs) => (jobs.find((job) => job.id === first.job.id)?.polls ?? 0) >= 3,
    });
    const [sketchThen] = stats.sketches.values();
    expect(sketchThen?.count).toBe(0);
    expect(sketchThen?.run?.map(([, age]) => age)).toEqual([70_000]);
    const second = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'second' } });
    await drive(h.deps, h.queue, h.clock);
    for (const { job } of [first, second]) expect((await h.store.get(job.id))?.status).toBe('SUCCEEDED');
    const firstLooks = looks.get('task-1') ?? [];
    const secondLooks = looks.get('task-2') ?? [];
    expect(firstLooks).toHaveLength(4);
    // Not at 10 and 30 s on the declared schedule: its first look waits for 70 s.
    expect(secondLooks[0]).toBeGreaterThanOrEqual(70_000);
    expect(secondLooks.length).toBeLessThan(firstLooks.length);
    // Both finished: their running entries are gone, their intervals kept.
    const [sketch] = stats.sketches.values();
    expect(sketch?.count).toBe(2);
    expect(sketch?.run ?? []).toEqual([]);
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
});

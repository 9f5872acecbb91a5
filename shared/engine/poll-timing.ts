/**
 * Learned poll timing: how long an upstream task of one operation (at one base URL) takes, from the
 * call that started it to the poll that found it done, and the delay that aims the next poll at a
 * quantile of it.
 *
 * An observation is an interval: the task finished after the poll before (which found it running)
 * and by the poll that found it done. A poll that finds its task done at once says only "done by
 * then"; one that finds it running says "not before". The sketch keeps the last `keptObservations`
 * intervals, recent ones weighing more (`decay` per newer task, so the estimate follows an upstream
 * whose timing changes within a few dozen tasks), and the distribution most likely to have produced
 * them (Turnbull's self-consistent estimate, by EM) as weights over a fixed logarithmic grid. Unlike
 * spreading each interval evenly over itself, this puts a "done by 15 s" (a 10x slow prior's first
 * poll) where the later, narrower intervals say tasks end, so a wrong prior stops mattering after a
 * few tasks, and a late poll (one that waited for a token) cannot drag the estimate later.
 *
 * A poll that finds its task still running at age `a` may also teach "this one lasts longer than
 * `a`" (a right-censored observation, the interval (a, ∞)): one entry per running task, replaced at
 * its next look and removed when its finished interval is recorded, dropped when stale (its job was
 * cancelled or failed). So jobs that start in one wave, before any task finished, aim past what the
 * earlier ones already saw running, and a wave's first finishers (its shortest tasks) do not pass for
 * the whole distribution. Pure: the store keeps the sketch, the runner supplies times.
 */
import * as z from 'zod';
import type { PollPolicy } from './policies';

/** Bucket `i` covers [edge(i), edge(i + 1)): 0, then 100 ms growing by 20 % a bucket, to about 8 h. */
const firstEdgeMs = 100;
const growth = 1.2;
export const sketchBuckets = 64;

function edge(index: number): number {
  return index <= 0 ? 0 : firstEdgeMs * growth ** (index - 1);
}

/** The end of bucket `index` (the last one is as wide as its growth). */
function edgeAfter(index: number): number {
  return index === sketchBuckets - 1 ? edge(index) * growth : edge(index + 1);
}

function bucketOf(ms: number): number {
  if (ms < firstEdgeMs) return 0;
  return Math.min(sketchBuckets - 1, 1 + Math.floor(Math.log(ms / firstEdgeMs) / Math.log(growth)));
}

/** Weight kept from the past at each new observation: about the last 35 tasks count. */
export const sketchDecay = 0.97;
/** Observations kept (the oldest weighs 0.97^47, about a quarter of the newest). */
export const keptObservations = 48;
/** Tasks seen running kept at most, the latest look of each (the youngest looks go first). */
export const keptRunning = 10;
/**
 * A running entry not refreshed for this long, or for as long as its task had run if that is longer
 * (a long task's polls come further apart), is dropped: its job was cancelled, failed, or gave up.
 */
export const runningEntryTtlMs = 15 * 60_000;
/**
 * A task seen running is recorded only when that can change aims (each record is a write of the
 * shared item, see `runningTeaches`): among others, when it moves an aimed quantile by this share.
 */
export const runningTeachesShift = 0.1;
/** EM rounds at most per record, and the change in any weight below which it stops early. */
const emRounds = 200;
const emTolerance = 1e-5;

export const durationSketchSchema = z.object({
  /** Sparse weights by bucket index (as a string key, JSON-friendly): the estimate, summing to `n`. */
  w: z.record(z.string().regex(/^\d+$/), z.number().nonnegative()),
  /** Total weight (the decayed number of observations). */
  n: z.number().nonnegative(),
  /** Observations ever recorded. */
  count: z.number().int().nonnegative(),
  updatedAt: z.number(),
  /**
   * The last observations, oldest first, flat: lower and upper bound (ms from the task's start) of
   * each. Absent in sketches written before session 8: their weights stand until the next record,
   * which starts the list.
   */
  obs: z
    .array(z.number().nonnegative())
    .max(2 * keptObservations)
    .optional(),
  /**
   * Tasks last seen still running (right-censored: each lasts longer than its age), one entry per
   * task: its id (a short hash of the job and step), its age at that look (ms from its start), and
   * when that was (epoch seconds). Absent in sketches written before session 9. In `w` with weight 1
   * each (as the newest), so `w` sums to `n` plus their number. Parsed up to 64 (written up to
   * `keptRunning`), so a later, larger cap still parses.
   */
  run: z
    .array(z.tuple([z.string().min(1).max(32), z.number().nonnegative(), z.number().nonnegative()]))
    .max(64)
    .optional(),
});
export type DurationSketch = z.infer<typeof durationSketchSchema>;

export function emptySketch(now: number): DurationSketch {
  return { w: {}, n: 0, count: 0, updatedAt: now, obs: [] };
}

type RunningEntry = [task: string, ageMs: number, atSeconds: number];

/** The running entries still current at `now` (see `runningEntryTtlMs`). */
function currentRunning(sketch: DurationSketch, now: number): RunningEntry[] {
  return (sketch.run ?? []).filter(
    ([, ageMs, atSeconds]) => now - atSeconds * 1000 <= Math.max(runningEntryTtlMs, ageMs),
  );
}

function withWeights(
  sketch: DurationSketch,
  obs: number[],
  run: RunningEntry[],
  n: number,
  count: number,
  now: number,
): DurationSketch {
  const next: DurationSketch = { w: selfConsistent(obs, run, n + run.length), n, count, updatedAt: now, obs };
  // Written only when some task is running, so a sketch without any stays as it was.
  if (run.length > 0 || sketch.run !== undefined) next.run = run;
  return next;
}

/**
 * Adds one task that finished after `lowerMs` and at or before `upperMs` (from its start). `task`
 * (its running entry's id, if it has one) is removed: its interval now says all it said and more.
 */
export function recordDuration(
  sketch: DurationSketch,
  lowerMs: number,
  upperMs: number,
  now: number,
  task?: string,
): DurationSketch {
  const lower = Math.max(0, Math.round(Math.min(lowerMs, upperMs)));
  const upper = Math.max(lower, Math.round(upperMs));
  const obs = [...(sketch.obs ?? []), lower, upper].slice(-2 * keptObservations);
  const n = sketch.n * sketchDecay + 1;
  const run = currentRunning(sketch, now).filter(([id]) => id !== task);
  return withWeights(sketch, obs, run, n, sketch.count + 1, now);
}

/**
 * Whether a look that found a task running at `ageMs` can change aims, so is worth a write of the
 * shared sketch (a write unit on DynamoDB): nothing is known yet; or no task has finished and it
 * ran longer than any seen running (with only lower bounds, every task is estimated beyond the
 * longest of them: only that one counts); or it ran longer than every task in the estimate (the
 * estimate is behind: a slower upstream); or it moves the quantiles polls aim at (0.65 and 0.9)
 * by `runningTeachesShift` or more (a wave whose first finishers were its shortest tasks). A
 * task running where the estimate expects some to run changes nothing and is not written. `task`:
 * its id, whose entry the look would replace.
 */
export function runningTeaches(
  sketch: DurationSketch | undefined,
  ageMs: number,
  now: number,
  task = '',
): boolean {
  if (!sketch) return true;
  // A sketch from before session 8 has weights but no observations to add a task to.
  if (sketch.obs === undefined && sketch.count > 0) return false;
  if (sketch.count === 0) return ageMs > longestRunningMs(sketch, now);
  const before = currentSketch(sketch, now);
  const share = doneShare(before, ageMs);
  if (share === undefined || share >= 1 - 1e-9) return true;
  const after = withRunning(sketch, task, ageMs, now);
  return [defaultPollAim.roomy, defaultPollAim.saturated].some((q) => {
    const from = conditionalQuantile(before, q) ?? 0;
    const to = conditionalQuantile(after, q) ?? 0;
    return Math.abs(to - from) >= runningTeachesShift * Math.max(1, from);
  });
}

/** The longest age any current running entry was seen at (0 for none). */
function longestRunningMs(sketch: DurationSketch, now: number): number {
  return Math.max(0, ...currentRunning(sketch, now).map(([, ageMs]) => ageMs));
}

/**
 * The sketch with task `task` seen running at `ageMs` (its entry replacing its last one; beyond
 * `keptRunning` entries, the youngest looks go), whether or not that is worth a write.
 */
export function withRunning(
  sketch: DurationSketch,
  task: string,
  ageMs: number,
  now: number,
): DurationSketch {
  const entry: RunningEntry = [task, Math.max(0, Math.round(ageMs)), Math.floor(now / 1000)];
  const run = [...currentRunning(sketch, now).filter(([id]) => id !== task), entry]
    .sort((a, b) => b[1] - a[1])
    .slice(0, keptRunning);
  return withWeights(sketch, [...(sketch.obs ?? [])], run, sketch.n, sketch.count, now);
}

/**
 * A look found task `task` still running `ageMs` after its start: its entry (replacing the one of
 * its look before). Undefined when it would not change aims (`runningTeaches`): nothing to write.
 * Beyond `keptRunning` entries, the youngest looks go.
 */
export function recordRunning(
  sketch: DurationSketch,
  task: string,
  ageMs: number,
  now: number,
): DurationSketch | undefined {
  if (!runningTeaches(sketch, ageMs, now, task)) return undefined;
  const next = withRunning(sketch, task, ageMs, now);
  // Among the youngest looks when the entries are full: it would be dropped at once.
  if (!next.run?.some(([id]) => id === task)) return undefined;
  return next;
}

/**
 * The sketch as of `now`: without the running entries gone stale since it was written (weights
 * recomputed), so a wave's cancelled jobs stop holding the estimate up even if nothing is recorded.
 */
export function currentSketch(sketch: DurationSketch, now: number): DurationSketch {
  const run = currentRunning(sketch, now);
  if (run.length === (sketch.run?.length ?? 0)) return sketch;
  // A sketch from before session 8 has no observations to recompute from (and no running entries).
  return withWeights(sketch, [...(sketch.obs ?? [])], run, sketch.n, sketch.count, sketch.updatedAt);
}

/**
 * The grid distribution most likely to produce these intervals (weights decaying with age), scaled
 * to `total`: Turnbull's self-consistency by EM. A task is taken as spread evenly within its bucket,
 * so an interval covers each bucket by the share of the bucket inside it (all of its bucket for a
 * point). EM starts from each interval spread evenly over itself and moves each interval's weight
 * towards the buckets the others make likely. A running task's (a, ∞) (weight 1, as the newest)
 * covers every bucket from a's on and starts in a's bucket: where no finished task lies beyond it,
 * its weight stays there (all the data says is "later than a"); otherwise it moves onto the tasks
 * that finished later than a (as Kaplan-Meier's redistribution to the right).
 */
function selfConsistent(
  obs: readonly number[],
  run: readonly RunningEntry[],
  total: number,
): Record<string, number> {
  const count = obs.length / 2;
  // Per observation: its weight, and the buckets it covers with the share of each covered (flat:
  // `cells` holds the bucket indices, `shares` the shares, rows `[starts[r], starts[r + 1])`).
  const weights: number[] = [];
  const starts: number[] = [0];
  const cells: number[] = [];
  const shares: number[] = [];
  let p = new Float64Array(sketchBuckets);
  for (let i = 0; i < count; i++) {
    const lower = obs[2 * i] ?? 0;
    const upper = obs[2 * i + 1] ?? lower;
    const weight = sketchDecay ** (count - 1 - i);
    const first = bucketOf(lower);
    const last = bucketOf(upper);
    const before = cells.length;
    for (let index = first; index <= last; index++) {
      const from = edge(index);
      const to = edgeAfter(index);
      const overlap = first === last ? to - from : Math.min(upper, to) - Math.max(lower, from);
      if (overlap <= 0) continue;
      cells.push(index);
      shares.push(overlap / (to - from));
      // EM starts from each interval spread evenly over itself.
      p[index] = (p[index] ?? 0) + weight * (first === last ? 1 : overlap / (upper - lower));
    }
    if (cells.length > before) {
      weights.push(weight);
      starts.push(cells.length);
    }
  }
  for (const [, ageMs] of run) {
    const first = bucketOf(ageMs);
    for (let index = first; index < sketchBuckets; index++) {
      const from = edge(index);
      const to = edgeAfter(index);
      cells.push(index);
      shares.push(index === first ? Math.max(1e-3, (to - Math.max(from, ageMs)) / (to - from)) : 1);
    }
    p[first] = (p[first] ?? 0) + 1;
    weights.push(1);
    starts.push(cells.length);
  }
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
  let next = new Float64Array(sketchBuckets);
  for (let round = 0; round < emRounds && weightSum > 0; round++) {
    next.fill(0);
    for (let row = 0; row < weights.length; row++) {
      const from = starts[row] ?? 0;
      const to = starts[row + 1] ?? from;
      let likelihood = 0;
      for (let c = from; c < to; c++) likelihood += (p[cells[c] ?? 0] ?? 0) * (shares[c] ?? 0);
      if (likelihood <= 0) continue;
      const scale = (weights[row] ?? 0) / likelihood;
      for (let c = from; c < to; c++) {
        const index = cells[c] ?? 0;
        next[index] = (next[index] ?? 0) + (p[index] ?? 0) * (shares[c] ?? 0) * scale;
      }
    }
    let change = 0;
    for (let index = 0; index < sketchBuckets; index++)
      change = Math.max(change, Math.abs((next[index] ?? 0) - (p[index] ?? 0)));
    [p, next] = [next, p];
    if (change / weightSum < emTolerance) break;
  }
  const answer: Record<string, number> = {};
  const scale = weightSum > 0 ? total / weightSum : 0;
  for (let index = 0; index < sketchBuckets; index++) {
    const kept = Math.round((p[index] ?? 0) * scale * 1e4) / 1e4;
    if (kept > 0) answer[String(index)] = kept;
  }
  return answer;
}

/**
 * The time (from the task's start) by which a share `q` of tasks still running at `afterMs` are
 * done: the q-quantile of the distribution conditioned on lasting beyond `afterMs`. Weight is
 * spread evenly inside a bucket. Undefined for an empty sketch.
 */
export function conditionalQuantile(sketch: DurationSketch, q: number, afterMs = 0): number | undefined {
  const entries = Object.entries(sketch.w)
    .map(([key, weight]) => [Number(key), weight] as const)
    .sort((a, b) => a[0] - b[0]);
  // Mass beyond `afterMs`, bucket by bucket (the part of the bucket after it).
  const pieces: { from: number; to: number; weight: number }[] = [];
  for (const [index, weight] of entries) {
    const from = edge(index);
    const to = index === sketchBuckets - 1 ? from * growth : edge(index + 1);
    if (to <= afterMs) continue;
    const start = Math.max(from, afterMs);
    pieces.push({ from: start, to, weight: (weight * (to - start)) / (to - from) });
  }
  const total = pieces.reduce((sum, piece) => sum + piece.weight, 0);
  if (total <= 0) return undefined;
  let target = Math.min(1, Math.max(0, q)) * total;
  for (const piece of pieces) {
    if (target <= piece.weight) return piece.from + ((piece.to - piece.from) * target) / piece.weight;
    target -= piece.weight;
  }
  return pieces[pieces.length - 1]?.to;
}

/** The share of tasks done by `atMs` among those still running at `afterMs`. */
export function doneShare(sketch: DurationSketch, atMs: number, afterMs = 0): number | undefined {
  let total = 0;
  let done = 0;
  for (const [key, weight] of Object.entries(sketch.w)) {
    const index = Number(key);
    const from = edge(index);
    const to = index === sketchBuckets - 1 ? from * growth : edge(index + 1);
    if (to <= afterMs) continue;
    const start = Math.max(from, afterMs);
    const piece = (weight * (to - start)) / (to - from);
    total += piece;
    if (atMs >= to) done += piece;
    else if (atMs > start) done += (piece * (atMs - start)) / (to - start);
  }
  return total > 0 ? done / total : undefined;
}

/** What the engine aims polls at: a quantile of the learned durations, by how busy the key is. */
export interface PollAim {
  /** Quantile aimed at while the key's rate budget has room (polls are cheap then). */
  roomy: number;
  /** Quantile aimed at while the budget is saturated (every early poll delays another job). */
  saturated: number;
}

export const defaultPollAim: PollAim = { roomy: 0.65, saturated: 0.9 };

/**
 * After a poll found its task running, the next one comes no sooner than this share of the time
 * the task has run: polls at 1, 1.4, 2 s... rather than a storm of polls 50 ms apart when the
 * estimate puts a sliver of mass just past the last poll (a task longer than most seen). It bounds a
 * task's polls by the log of its time, and costs a finished task at most this share of its time.
 */
export const minPollGapShare = 0.4;
/** Past everything seen so far (no mass left after the last poll): look again after this share. */
export const tailPollGapShare = 0.5;

/**
 * When to poll next, in milliseconds from now. `elapsedMs` is the time since the task started,
 * `lastPollAtMs` when (from its start) a poll last found it running (0 for none). With no sketch the
 * declared schedule (`declaredDelayMs`) is used: it is only the prior. While no task has finished
 * but some were seen running, the declared schedule too, but never before the longest of them (the
 * cold wave: jobs started together all polled on the prior although the first had already seen
 * their tasks run longer). A first task found done at
 * the first poll teaches only "by then"; its weight spreads over the whole interval, so the next
 * aim is earlier, and the estimate narrows down within a few tasks (faster while the budget has
 * room and polls aim at a lower quantile). After a poll found the task running, the next is at
 * least `minPollGapShare` of the time run later; past everything seen, `tailPollGapShare`. The
 * declared `maxDelayMs` does not cap a learned delay (it is part of the same prior); the give-up
 * time does.
 */
export function learnedPollDelay(options: {
  sketch: DurationSketch | undefined;
  policy: PollPolicy;
  declaredDelayMs: number;
  elapsedMs: number;
  lastPollAtMs: number;
  quantile: number;
}): number {
  const { sketch, policy, declaredDelayMs, elapsedMs, lastPollAtMs, quantile } = options;
  if (!sketch || (sketch.count === 0 && (sketch.run?.length ?? 0) === 0)) return declaredDelayMs;
  const giveUpCap = Math.max(policy.maxDelayMs, policy.giveUpAfterMs - elapsedMs);
  if (sketch.count === 0) {
    // Only tasks seen running, none finished: none is known done before the longest seen running
    // (the estimate puts them all beyond it), so no poll before then; past it, the declared
    // schedule (the prior: nothing says how far beyond).
    const longest = Math.max(0, ...(sketch.run ?? []).map(([, ageMs]) => ageMs));
    if (longest <= elapsedMs) return declaredDelayMs;
    return Math.round(Math.min(giveUpCap, Math.max(declaredDelayMs, longest - elapsedMs)));
  }
  const aimAt = conditionalQuantile(sketch, quantile, lastPollAtMs);
  const learned =
    aimAt === undefined || aimAt <= elapsedMs
      ? // Past everything seen so far: look again after a share of the time already run (geometric).
        Math.max(250, tailPollGapShare * elapsedMs)
      : Math.max(lastPollAtMs > 0 ? minPollGapShare * elapsedMs : 50, aimAt - elapsedMs);
  // The declared `maxDelayMs` is part of the prior too: a schedule 10 times too fast also caps its
  // delays 10 times too low, and capping the learned aim by it polled every task that many times
  // (bench/README.md, `learned 10x fast`). Only the give-up time bounds a learned delay.
  return Math.round(Math.min(giveUpCap, Math.max(50, learned)));
}

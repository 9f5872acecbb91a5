/**
 * Learned poll timing: how long an upstream task of one operation (at one base URL) takes, from the
 * call that started it to the poll that found it done, kept as a compact decaying histogram over a
 * fixed logarithmic grid, and the delay that aims the next poll at a quantile of it.
 *
 * An observation is an interval: the task finished after the poll before (which found it running)
 * and before the poll that found it done, so its weight is spread over that interval. Each new
 * observation first multiplies the old weights by `decay`, so the estimate follows an upstream whose
 * timing changes (load, input) within a few dozen tasks. Pure: the store keeps the sketch, the
 * runner supplies times.
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

function bucketOf(ms: number): number {
  if (ms < firstEdgeMs) return 0;
  return Math.min(sketchBuckets - 1, 1 + Math.floor(Math.log(ms / firstEdgeMs) / Math.log(growth)));
}

/** Weight kept from the past at each new observation: about the last 35 tasks count. */
export const sketchDecay = 0.97;

export const durationSketchSchema = z.object({
  /** Sparse weights by bucket index (as a string key, JSON-friendly). */
  w: z.record(z.string().regex(/^\d+$/), z.number().nonnegative()),
  /** Total weight (the decayed number of observations). */
  n: z.number().nonnegative(),
  /** Observations ever recorded. */
  count: z.number().int().nonnegative(),
  updatedAt: z.number(),
});
export type DurationSketch = z.infer<typeof durationSketchSchema>;

export function emptySketch(now: number): DurationSketch {
  return { w: {}, n: 0, count: 0, updatedAt: now };
}

/** Adds one task that finished after `lowerMs` and at or before `upperMs` (from its start). */
export function recordDuration(
  sketch: DurationSketch,
  lowerMs: number,
  upperMs: number,
  now: number,
): DurationSketch {
  const lower = Math.max(0, Math.min(lowerMs, upperMs));
  const upper = Math.max(lower, upperMs);
  const weights: Record<string, number> = {};
  for (const [key, value] of Object.entries(sketch.w)) {
    const kept = Math.round(value * sketchDecay * 1e4) / 1e4;
    if (kept > 0) weights[key] = kept;
  }
  const first = bucketOf(lower);
  const last = bucketOf(upper);
  const span = upper - lower;
  // How the interval overlaps each bucket: uniform shares, and the shares the estimate so far puts
  // there. An observation that only says "done by then" (a late poll, one that waited for a token)
  // is mostly given where tasks are already known to end, so it cannot drag the estimate later;
  // the uniform part keeps a new or changed timing learnable.
  const uniform = new Map<number, number>();
  const known = new Map<number, number>();
  let knownTotal = 0;
  for (let index = first; index <= last; index++) {
    const from = edge(index);
    const to = index === sketchBuckets - 1 ? from * growth : edge(index + 1);
    const overlap = Math.min(upper, to) - Math.max(lower, from);
    const share = span <= 0 || first === last ? 1 : overlap / span;
    if (share <= 0) continue;
    uniform.set(index, share);
    const mass = ((weights[String(index)] ?? 0) * Math.max(0, overlap)) / (to - from);
    known.set(index, mass);
    knownTotal += mass;
  }
  const trust = knownTotal > 0 ? Math.min(0.8, knownTotal / (knownTotal + 1)) : 0;
  for (const [index, share] of uniform) {
    const fromKnown = knownTotal > 0 ? (known.get(index) ?? 0) / knownTotal : 0;
    const added = trust * fromKnown + (1 - trust) * share;
    weights[String(index)] = Math.round(((weights[String(index)] ?? 0) + added) * 1e4) / 1e4;
  }
  return {
    w: weights,
    n: sketch.n * sketchDecay + 1,
    count: sketch.count + 1,
    updatedAt: now,
  };
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
 * declared schedule (`declaredDelayMs`) is used: it is only the prior. A first task found done at
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
  if (!sketch || sketch.count === 0) return declaredDelayMs;
  const aimAt = conditionalQuantile(sketch, quantile, lastPollAtMs);
  const learned =
    aimAt === undefined || aimAt <= elapsedMs
      ? // Past everything seen so far: look again after a share of the time already run (geometric).
        Math.max(250, tailPollGapShare * elapsedMs)
      : Math.max(lastPollAtMs > 0 ? minPollGapShare * elapsedMs : 50, aimAt - elapsedMs);
  // The declared `maxDelayMs` is part of the prior too: a schedule 10 times too fast also caps its
  // delays 10 times too low, and capping the learned aim by it polled every task that many times
  // (bench/README.md, `learned 10x fast`). Only the give-up time bounds a learned delay.
  return Math.round(
    Math.min(Math.max(policy.maxDelayMs, policy.giveUpAfterMs - elapsedMs), Math.max(50, learned)),
  );
}

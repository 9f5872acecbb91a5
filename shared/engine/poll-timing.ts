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
 * The estimate is then smoothed once over neighbouring buckets. Turnbull's estimate piles a "done by
 * t" up just under t, where the intervals overlap: a job that polls its tasks near one time learns
 * that they end just before it, and polls there again (its estimate confirms itself). Smoothing
 * keeps a share of that mass below the poll time, where the next plan then looks and learns.
 *
 * When no kept interval bounds a task from below (every poll found its task done, as in a saturated
 * batch polled once a task), nothing tells where below the least "done by" tasks end, and EM keeps
 * its start there: each interval is then spread over the grid's buckets (scale-free), not over its
 * time, which said "half the least poll time" whatever the tasks took and climbed with each token
 * wait (bench/journal/2026-11-29-throughput-large-cells.md). Pure: the store keeps the sketch, the
 * runner supplies times.
 */
import * as z from 'zod';

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
/** EM rounds at most per record, and the change in any weight below which it stops early. */
const emRounds = 200;
const emTolerance = 1e-5;
/**
 * The share of each bucket's weight the estimate moves to each neighbouring bucket (20 % apart),
 * once, after EM. A kernel a bucket wide, not a fit to one shape: in the lone-job simulation
 * (bench/throughput-lone-sim.ts, 2,000 runs of 10 tasks on three seeds) it lowered the delay on
 * lognormal and Pareto times by 7 to 31 % at the same polls, moved bimodal ones by -16 to +14 % with
 * fewer polls, and left 1-3 s tasks on the curve of delay against polls; a share of 0.25, or three
 * passes, did worse (docs/adr/0012-learned-estimate-smoothed.md).
 */
export const sketchSmoothing = 0.15;

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
   * each. Absent in sketches written before the list was kept: their weights stand until the next record,
   * which starts the list.
   */
  obs: z
    .array(z.number().nonnegative())
    .max(2 * keptObservations)
    .optional(),
});
export type DurationSketch = z.infer<typeof durationSketchSchema>;

export function emptySketch(now: number): DurationSketch {
  return { w: {}, n: 0, count: 0, updatedAt: now, obs: [] };
}

/** Adds one task that finished after `lowerMs` and at or before `upperMs` (from its start). */
export function recordDuration(
  sketch: DurationSketch,
  lowerMs: number,
  upperMs: number,
  now: number,
): DurationSketch {
  const lower = Math.max(0, Math.round(Math.min(lowerMs, upperMs)));
  const upper = Math.max(lower, Math.round(upperMs));
  const obs = [...(sketch.obs ?? []), lower, upper].slice(-2 * keptObservations);
  const n = sketch.n * sketchDecay + 1;
  return { w: selfConsistent(obs, n), n, count: sketch.count + 1, updatedAt: now, obs };
}

/**
 * The grid distribution most likely to produce these intervals (weights decaying with age), scaled
 * to `total`: Turnbull's self-consistency by EM. A task is taken as spread evenly within its bucket,
 * so an interval covers each bucket by the share of the bucket inside it (all of its bucket for a
 * point). EM starts from each interval spread evenly over itself and moves each interval's weight
 * towards the buckets the others make likely.
 */
function selfConsistent(obs: readonly number[], total: number): Record<string, number> {
  const count = obs.length / 2;
  // Per observation: its weight, and the buckets it covers with the share of each covered (flat:
  // `cells` holds the bucket indices, `shares` the shares, rows `[starts[r], starts[r + 1])`).
  const weights: number[] = [];
  const starts: number[] = [0];
  const cells: number[] = [];
  const shares: number[] = [];
  let p = new Float64Array(sketchBuckets);
  // Does any interval bound a task from below? If not, EM starts scale-free (see the file's head).
  let bounded = false;
  for (let i = 0; i < count; i++) if ((obs[2 * i] ?? 0) > 0) bounded = true;
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
    }
    // EM starts from each interval spread evenly over itself (`bounded`), else over its buckets.
    let covered = 0;
    for (let c = before; c < cells.length; c++) covered += shares[c] ?? 0;
    for (let c = before; c < cells.length; c++) {
      const index = cells[c] ?? 0;
      const from = edge(index);
      const to = edgeAfter(index);
      const overlap = (shares[c] ?? 0) * (to - from);
      p[index] =
        (p[index] ?? 0) +
        weight * (bounded ? (first === last ? 1 : overlap / (upper - lower)) : (shares[c] ?? 0) / covered);
    }
    if (cells.length > before) {
      weights.push(weight);
      starts.push(cells.length);
    }
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
  smoothInPlace(p, sketchSmoothing);
  const answer: Record<string, number> = {};
  const scale = weightSum > 0 ? total / weightSum : 0;
  for (let index = 0; index < sketchBuckets; index++) {
    const kept = Math.round((p[index] ?? 0) * scale * 1e4) / 1e4;
    if (kept > 0) answer[String(index)] = kept;
  }
  return answer;
}

/**
 * Moves `share` of each bucket's weight to each neighbour (the first and the last keep what would
 * fall off the grid): the total weight is kept.
 */
function smoothInPlace(weights: Float64Array, share: number): void {
  let previous = 0;
  for (let index = 0; index < weights.length; index++) {
    const current = weights[index] ?? 0;
    const fromLeft = index > 0 ? previous : current;
    const fromRight = index < weights.length - 1 ? (weights[index + 1] ?? 0) : current;
    weights[index] = (1 - 2 * share) * current + share * (fromLeft + fromRight);
    previous = current;
  }
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

/**
 * The mean of the learned durations (weight spread evenly inside each bucket), undefined for an
 * empty sketch. What a chain of tasks takes on average is the sum of their means: for a skewed
 * upstream (a lognormal, a heavy tail) the median says much less (half the mean and below).
 */
export function sketchMean(sketch: DurationSketch): number | undefined {
  let total = 0;
  let sum = 0;
  for (const [key, weight] of Object.entries(sketch.w)) {
    const index = Number(key);
    const from = edge(index);
    const to = index === sketchBuckets - 1 ? from * growth : edge(index + 1);
    total += weight;
    sum += weight * ((from + to) / 2);
  }
  return total > 0 ? sum / total : undefined;
}

/**
 * The standard deviation of the learned durations (weight spread evenly inside each bucket),
 * undefined for an empty sketch.
 */
export function sketchSd(sketch: DurationSketch): number | undefined {
  const mean = sketchMean(sketch);
  if (mean === undefined) return undefined;
  let total = 0;
  let sum = 0;
  for (const cell of sketchCells(sketch)) {
    // An even spread over [from, to): its second moment about the mean.
    const middle = (cell.from + cell.to) / 2;
    const width = cell.to - cell.from;
    total += cell.weight;
    sum += cell.weight * ((middle - mean) ** 2 + width ** 2 / 12);
  }
  return total > 0 ? Math.sqrt(sum / total) : undefined;
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

/** The sketch's buckets with weight, in order: where each starts and ends (ms) and its weight. */
export function sketchCells(sketch: DurationSketch): { from: number; to: number; weight: number }[] {
  return Object.entries(sketch.w)
    .map(([key, weight]) => [Number(key), weight] as const)
    .filter(([, weight]) => weight > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([index, weight]) => ({ from: edge(index), to: edgeAfter(index), weight }));
}

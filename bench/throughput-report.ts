/**
 * How the throughput bench (bench/throughput.ts) reports a case: a case whose jobs did not all
 * succeed is not a figure. Its makespan is only the time of the jobs that ended (a job that failed on
 * a timeout ends early, so a failed cell could read 0.65 of the bound), and its calls miss the failed
 * jobs' work; it is printed as failed, with how many jobs failed and why, no ratio, and it does not
 * meet the goals.
 */
import type { Job } from '../shared/engine';

/** Why the jobs of a case that did not succeed did not: a failure kind, `cancelled` or `unfinished`. */
export type Failures = Record<string, number>;

/**
 * The jobs of `ids` that did not succeed, by why: a failed job by its error's kind (`poll-timeout`,
 * `timeout`, `deadline`, ...), a cancelled one as `cancelled`, and one still running when the bench
 * stopped waiting, or not found, as `unfinished`.
 */
export function failuresOf(ids: readonly string[], jobs: readonly Job[]): Failures {
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const failures: Failures = {};
  for (const id of ids) {
    const job = byId.get(id);
    if (job?.status === 'SUCCEEDED') continue;
    const why =
      job === undefined
        ? 'unfinished'
        : job.status === 'FAILED'
          ? (job.lastError?.kind ?? 'failed')
          : job.status === 'CANCELLED'
            ? 'cancelled'
            : 'unfinished';
    failures[why] = (failures[why] ?? 0) + 1;
  }
  return failures;
}

/** Jobs counted in `failures`. */
export const failedCount = (failures: Failures | undefined): number =>
  Object.values(failures ?? {}).reduce((sum, count) => sum + count, 0);

/**
 * A failed case's text, e.g. `FAILED 3/30 (2 poll-timeout, 1 unfinished)`; undefined when every job
 * succeeded and the bench did not stop waiting (`timedOut`).
 */
export function failedText(
  jobs: number,
  failures: Failures | undefined,
  timedOut: boolean,
): string | undefined {
  const count = failedCount(failures);
  if (count === 0 && !timedOut) return undefined;
  const reasons = Object.entries(failures ?? {})
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([why, n]) => `${n} ${why}`);
  if (timedOut && !(failures && 'unfinished' in failures)) reasons.push('wait timed out');
  return count === 0 ? `FAILED (${reasons.join(', ')})` : `FAILED ${count}/${jobs} (${reasons.join(', ')})`;
}

/** A batch case's figures: ratios when every job succeeded, else the failure and no ratio. */
export interface BatchFigures {
  text: string;
  /** Every job succeeded: the ratios are figures. */
  ok: boolean;
  makespan: number;
  calls: number;
  /** Throttled answers, % of the calls. */
  throttled: number;
}

export function batchFigures(
  r: {
    wallMs: number;
    calls: number;
    throttled: number;
    jobs: number;
    failures?: Failures;
    timedOut: boolean;
  },
  boundMs: number,
  minCalls: number,
): BatchFigures {
  const failed = failedText(r.jobs, r.failures, r.timedOut);
  if (failed !== undefined)
    return { text: failed, ok: false, makespan: Number.NaN, calls: Number.NaN, throttled: Number.NaN };
  const makespan = r.wallMs / boundMs;
  const calls = r.calls / minCalls;
  const throttled = (100 * r.throttled) / Math.max(1, r.calls);
  return {
    text: `${makespan.toFixed(2)} ${calls.toFixed(2)} ${throttled.toFixed(1)}%`,
    ok: true,
    makespan,
    calls,
    throttled,
  };
}

/** The batch goals: every job succeeded, makespan <= 1.10 of the bound, calls <= 1.05 of the minimum, throttled <= 2 %. */
export const meetsBatchGoals = (f: BatchFigures): boolean =>
  f.ok && f.makespan <= 1.1 && f.calls <= 1.05 && f.throttled <= 2;

/**
 * The batch's bound when the key's budget and the jobs' chains bind together (bench/throughput.md,
 * "The bound").
 *
 * The matrix's bound is the larger of two: the minimum calls at the key's QPS, and the longest own
 * tasks' time of one job. Each holds for any client, but when the two are near each other neither
 * is reached: the calls that take the last tokens belong to jobs that still have tasks to walk.
 * This bound counts both at once. Each job is its chain of calls (the workflow's steps that call,
 * once each); after a call that starts a task the next call waits for the task's drawn duration,
 * after any other call for the next token (1/QPS: calls spaced at the key's rate, as the N/QPS
 * bound has them). A call with `R` of chain after it must be made by `T - R` (T the makespan), and
 * the key gives its k-th call (from 1) at `k/QPS` at the earliest (the N/QPS bound's count); giving
 * the calls in the order of their chains left, longest first, is the best order for that, so
 *
 *     T >= max over k of ( k / QPS + R_(k) ),  R_(1) >= R_(2) >= ... the calls' chains left.
 *
 * It is never below N/QPS (the last call, R = 0) nor the longest own tasks' time (k = 1). A limiter with
 * a burst (the bucket's 2 s of calls, a fixed window's first second) lets a client that bursts
 * start earlier; opflow spaces calls at the rate, as this bound and the N/QPS one assume.
 */
import type { LedgerEntry } from '../shared/sandbox/ledger';

/** What the bound reads of a workflow: its steps, which call (not `fetch`) and which poll a task. */
type Chain = { steps: readonly { kind?: string; poll?: unknown }[] };

/** Each job's tasks' drawn durations in the order they started, by the job's upstream task id (the salt's). */
export function tasksByJob(calls: readonly LedgerEntry[]): Map<string, number[]> {
  const jobs = new Map<string, number[]>();
  for (const call of [...calls].sort((a, b) => a.time - b.time || a.seq - b.seq)) {
    for (const work of call.startedWork ?? []) {
      const job = (work.salt ?? '').split(':')[0] ?? '';
      const list = jobs.get(job) ?? [];
      list.push(work.durationMs);
      jobs.set(job, list);
    }
  }
  return jobs;
}

/**
 * One job's calls' chains left (ms), first call first: the gap after each call is the next polled
 * step's task (the k-th task drawn for the k-th polled step) or one token interval.
 */
export function chainsLeft(workflow: Chain, tasks: readonly number[], intervalMs: number): number[] {
  const steps = workflow.steps.filter((step) => step.kind !== 'fetch');
  const gaps: number[] = [];
  let task = 0;
  for (let i = 1; i < steps.length; i++) {
    const polled = steps[i]?.poll !== undefined;
    gaps.push(polled ? (tasks[task++] ?? 0) : intervalMs);
  }
  // Tasks drawn past the polled steps (none on the novelty check) still lie on the chain.
  for (; task < tasks.length; task++) gaps[gaps.length - 1] = (gaps.at(-1) ?? 0) + (tasks[task] ?? 0);
  const left: number[] = new Array(steps.length).fill(0);
  for (let i = steps.length - 2; i >= 0; i--) left[i] = (left[i + 1] ?? 0) + (gaps[i] ?? 0);
  return left;
}

/** The bound above, ms: calls in order of their chains left, the k-th (from 1) at k/QPS. */
export function chainBudgetBoundMs(
  workflow: Chain,
  jobs: ReadonlyMap<string, readonly number[]>,
  qps: number,
): number {
  const intervalMs = 1000 / qps;
  const all = [...jobs.values()].flatMap((tasks) => chainsLeft(workflow, tasks, intervalMs));
  all.sort((a, b) => b - a);
  let bound = 0;
  all.forEach((left, k) => {
    bound = Math.max(bound, (k + 1) * intervalMs + left);
  });
  return bound;
}

/** A lone job's floor over its own tasks' time: its tasks plus a token interval per other gap. */
export function loneFloor(workflow: Chain, tasks: readonly number[], qps: number): number {
  const own = tasks.reduce((sum, ms) => sum + ms, 0);
  const chain = chainsLeft(workflow, tasks, 1000 / qps)[0] ?? own;
  return own > 0 ? chain / own : Number.NaN;
}

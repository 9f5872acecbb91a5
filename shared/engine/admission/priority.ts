/**
 * Priorities and horizons: how far ahead a waiting call may reserve its key's token, and in what
 * order waiting calls stand. Calls that advance a job go before speculative polls and new jobs'
 * first calls, so a large batch is admitted at the pace the budget sustains.
 */
import type { EngineDeps } from '../deps';
import type { Job } from '../job-record';
import { stepStatsKey } from '../poll-stats';
import { doneShare } from '../poll-timing';
import type { Step, Workflow } from '../workflow';
import type { CallOrder } from './budget-filler';

/**
 * How far ahead a job may reserve a token of its key's budget, by its `priority` (0 first, 1 last;
 * see `waitPriority`). Reserving puts the job in line: a job whose token is due within its horizon
 * takes it now and waits for exactly then; one beyond it is sent back and asks again later, behind
 * the jobs that reserved meanwhile. So calls that advance a job (horizon up to the full one) are
 * served before speculative polls and new jobs' first calls (down to `minReserveHorizonMs`), and a
 * large batch is admitted at the pace the budget sustains instead of queueing in front of the
 * calls of jobs already started. Near the end of the key's work (`order` longest-first, see
 * budget-filler.ts) a new job's first call has the horizon its priority gives like any other.
 */
export function reserveHorizonMs(
  job: Job,
  horizonMs = defaultReserveHorizonMs,
  priority = 0,
  order?: CallOrder | undefined,
): number {
  if (horizonMs <= 0) return 0;
  const least = Math.min(horizonMs, minReserveHorizonMs);
  // A job's own priority (job-record.ts) comes before the engine's order: `high` always reserves
  // the full horizon (its first call too), `low` the least.
  if (job.priority === 'high') return horizonMs;
  if (job.priority === 'low') return least;
  if (job.status === 'QUEUED' && order !== 'longest-first') return least;
  return Math.max(least, Math.round(horizonMs * (1 - Math.min(1, Math.max(0, priority)))));
}

export const defaultReserveHorizonMs = 15_000;
export const minReserveHorizonMs = 2_000;

/** A poll whose task is less likely done than this (by the learned timing) is speculative. */
const speculativeBelow = 0.5;

/**
 * How long a job waiting for a token may stand back, from 0 (first) to 1 (last): a new job's first
 * call last; a speculative poll (its operation's tasks are less likely than not done by now, or,
 * with nothing learned, a poll that already found its task running) behind calls that advance a
 * job (creates, confirmations, polls likely to find the task done); among those, jobs with fewer
 * steps left first. `done`: the learned share of tasks done by now (undefined: nothing learned).
 * With `order` longest-first (near the end of the key's work, budget-filler.ts) the steps left
 * count the other way: new jobs' first calls first, then jobs with more steps left; speculative
 * polls still stand back. A job's own priority wins over all of it: `high` is 0, `low` is 1.
 */
export function waitPriority(
  workflow: Workflow,
  job: Job,
  step: Step,
  done?: number,
  order?: CallOrder | undefined,
): number {
  if (job.priority === 'high') return 0;
  if (job.priority === 'low') return 1;
  const longestFirst = order === 'longest-first';
  if (job.status === 'QUEUED') return longestFirst ? 0 : 1;
  const index = workflow.steps.findIndex((candidate) => candidate.name === step.name);
  const left =
    workflow.steps.length > 0 ? (workflow.steps.length - 1 - Math.max(0, index)) / workflow.steps.length : 0;
  const speculative =
    step.poll !== undefined && (done === undefined ? job.polls > 0 : done < speculativeBelow);
  return Math.min(1, (speculative ? 0.5 : 0) + 0.5 * (longestFirst ? 1 - left : left));
}

/** The learned share of a polled step's tasks done by now, given the job's task ran at its last poll. */
export async function likelyDone(
  deps: Pick<EngineDeps, 'pollStats' | 'pollStatsScope'>,
  step: Step,
  job: Job,
  now: number,
): Promise<number | undefined> {
  const key = stepStatsKey(deps.pollStatsScope, step);
  const startedAt = job.pollStartedAt;
  if (!deps.pollStats || key === undefined || startedAt === undefined) return undefined;
  try {
    const sketch = (await deps.pollStats.load([key])).get(key);
    if (!sketch || sketch.count === 0) return undefined;
    const runningAt = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
    return doneShare(sketch, now - startedAt, runningAt);
  } catch {
    return undefined; // the priority only orders waiting jobs: the declared rule does without it
  }
}

/**
 * A schedule's cost caps. `maxUnitsPerRun` bounds each of its jobs (the job's `maxUnits`: it stops
 * before its next step once reached, FAILED with kind `cost-cap`), and such a run pauses the
 * schedule. `maxUnitsPerDay` bounds the billed units its jobs spend in any 24 hours: a new job's
 * `maxUnits` is at most what is left of it (so a run in progress stops at its next step once the
 * day's spend reaches the cap, not only the runs after it). Once the jobs created in the last 24
 * hours have been billed that much, the schedule is paused
 * (in its state, as `opflow schedules pause` does) with a reason naming the figures, so no further
 * slot fires until a person resumes it; the reason shows in `opflow schedules`, the API and the
 * dashboard. Billed units are known after each call, so the cap is checked at every tick.
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { Job } from '../engine/job-record';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import { pauseSchedule, updateScheduleState } from './pause';

export const dayMs = 24 * 60 * 60_000;

/** How many of a schedule's latest runs are looked at for one stopped at its run cap. */
const recentRuns = 5;

/**
 * Billed units of the jobs of one source (`schedule` or `webhook`) whose idempotency key starts with
 * `keyPrefix`, created since `since` (newest first, so paging stops early).
 */
export async function unitsSpentSince(
  deps: Pick<JobDeps, 'store'>,
  jobs: { tenant: string; source: 'schedule' | 'webhook'; keyPrefix: string },
  since: number,
): Promise<{ units: number; jobs: number }> {
  let units = 0;
  let count = 0;
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const listed = await deps.store.list({ tenant: jobs.tenant, limit: 200, cursor });
    for (const job of listed.jobs) {
      if (job.createdAt < since) return { units, jobs: count };
      if (job.source !== jobs.source || !job.idempotencyKey?.startsWith(jobs.keyPrefix)) continue;
      units += job.usage.billedUnits;
      count += 1;
    }
    cursor = listed.cursor;
    if (cursor === undefined) break;
  }
  return { units, jobs: count };
}

/**
 * The `maxUnits` of a new job given `perRun` and what is left of `perDay` after `spent`: the smaller;
 * undefined without caps. Nothing left (a person's trigger past the day cap) leaves the run cap alone.
 */
export function runBudget(
  caps: { maxUnitsPerRun?: number | undefined; maxUnitsPerDay?: number | undefined },
  spent: number,
): number | undefined {
  const left = caps.maxUnitsPerDay === undefined ? undefined : caps.maxUnitsPerDay - spent;
  if (left === undefined || left < 1) return caps.maxUnitsPerRun;
  return caps.maxUnitsPerRun === undefined ? left : Math.min(caps.maxUnitsPerRun, left);
}

/** The idempotency key prefix of a schedule's jobs: `schedule:<name>:<slot>[:manual]`. */
const scheduleKeyPrefix = (schedule: Schedule) => `schedule:${schedule.name}:`;

/** The `maxUnits` of the schedule's next job: its run cap, lowered to what is left of its day cap. */
export async function scheduleRunBudget(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  schedule: Schedule,
): Promise<number | undefined> {
  if (schedule.maxUnitsPerDay === undefined) return schedule.maxUnitsPerRun;
  const spent = await unitsSpentSince(
    deps,
    { tenant: schedule.tenant, source: 'schedule', keyPrefix: scheduleKeyPrefix(schedule) },
    deps.clock.now() - dayMs,
  );
  return runBudget(schedule, spent.units);
}

/**
 * Pauses the schedule when its jobs of the last 24 hours have been billed `maxUnitsPerDay` or more.
 * Returns the reason when it paused it now.
 */
export async function pauseAtDayCap(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  states: ScheduleStateStore,
  schedule: Schedule,
): Promise<string | undefined> {
  const cap = schedule.maxUnitsPerDay;
  if (cap === undefined || schedule.paused) return undefined;
  const state = await states.get(schedule.name);
  if (state?.paused) return undefined;
  const now = deps.clock.now();
  // The jobs of its slots and triggers: idempotency key `schedule:<name>:<slot>[:manual]`.
  const spent = await unitsSpentSince(
    deps,
    { tenant: schedule.tenant, source: 'schedule', keyPrefix: scheduleKeyPrefix(schedule) },
    now - dayMs,
  );
  if (spent.units < cap) return undefined;
  const reason = `cost cap reached: its ${spent.jobs} job(s) of the last 24 hours were billed ${spent.units} units, maxUnitsPerDay is ${cap} (resume it to go on)`;
  await pauseSchedule(deps, states, schedule, reason);
  return reason;
}

/**
 * Pauses the schedule when its latest run stopped at its run cap (`maxUnitsPerRun`), once per such
 * run: a person who resumes it is not stopped again by the same run. A run stopped by what was left
 * of the day cap (its maxUnits below the run cap) is the day cap's (`pauseAtDayCap`). Returns the
 * reason when it paused it now.
 */
export async function pauseAtRunCap(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  states: ScheduleStateStore,
  schedule: Schedule,
): Promise<string | undefined> {
  if (schedule.maxUnitsPerRun === undefined || schedule.paused) return undefined;
  const state = await states.get(schedule.name);
  if (!state || state.paused) return undefined;
  // Its latest runs, newest first (with overlapping runs the capped one may not be the last).
  const ids = [...new Set([state.lastJobId, ...(state.runs ?? []).map((run) => run.jobId).reverse()])]
    .filter((id): id is string => id !== undefined)
    .slice(0, recentRuns);
  const perRun = schedule.maxUnitsPerRun;
  let job: Job | undefined;
  for (const id of ids) {
    const run = await deps.store.get(id);
    if (
      run?.status === 'FAILED' &&
      run.lastError?.kind === 'cost-cap' &&
      (run.maxUnits ?? perRun) >= perRun
    ) {
      job = run;
      break;
    }
  }
  if (!job || job.id === state.runCapJobId) return undefined;
  const reason = `run cost cap reached: job ${job.id} was billed ${job.usage.billedUnits} units, maxUnitsPerRun is ${perRun}; it stopped before step "${job.step}" (resume the schedule to go on; opflow retry ${job.id} --max-units <more> finishes that run)`;
  await updateScheduleState(states, schedule.name, deps.clock.now(), (current) => ({
    ...current,
    runCapJobId: job.id,
  }));
  await pauseSchedule(deps, states, schedule, reason.slice(0, 500));
  return reason;
}

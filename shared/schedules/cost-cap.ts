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
import type { CostCapOrigin, Job } from '../engine/job-record';
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
): Promise<DaySpend> {
  let units = 0;
  let count = 0;
  const billed: DaySpend['billed'] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const listed = await deps.store.list({ tenant: jobs.tenant, limit: 200, cursor });
    for (const job of listed.jobs) {
      if (job.createdAt < since) return { units, jobs: count, billed };
      if (job.source !== jobs.source || !job.idempotencyKey?.startsWith(jobs.keyPrefix)) continue;
      units += job.usage.billedUnits;
      count += 1;
      if (job.usage.billedUnits > 0) billed.push({ at: job.createdAt, units: job.usage.billedUnits });
    }
    cursor = listed.cursor;
    if (cursor === undefined) break;
  }
  return { units, jobs: count, billed };
}

/** What a source's jobs of a window were billed: in all, how many jobs, and each billed job (newest first). */
export interface DaySpend {
  units: number;
  jobs: number;
  billed: { at: number; units: number }[];
}

/**
 * When the spend of the last 24 hours falls below `cap` if nothing more is billed: the day cap counts
 * the jobs created in the 24 hours before now, so it frees up as the oldest of them age out.
 * Undefined when it is below the cap already. `extra`: units a job started now may still add.
 */
export function dayCapFreesAt(
  spend: DaySpend,
  cap: number,
  extra?: { at: number; units: number },
): number | undefined {
  const billed = [...spend.billed, ...(extra ? [extra] : [])].sort((a, b) => a.at - b.at);
  let total = billed.reduce((sum, one) => sum + one.units, 0);
  if (total < cap) return undefined;
  for (const one of billed) {
    total -= one.units;
    if (total < cap) return one.at + dayMs;
  }
  return undefined;
}

/** The `costCap` a job of a capped schedule or webhook source carries (see Job.costCap). */
export function costCapOrigin(
  owner: CostCapOrigin['owner'],
  name: string,
  caps: { maxUnitsPerRun?: number | undefined; maxUnitsPerDay?: number | undefined },
  spend: DaySpend | undefined,
  maxUnits: number | undefined,
  now: number,
): CostCapOrigin | undefined {
  if (caps.maxUnitsPerRun === undefined && caps.maxUnitsPerDay === undefined) return undefined;
  const perDay = caps.maxUnitsPerDay;
  const dayFreesAt =
    perDay === undefined || spend === undefined
      ? undefined
      : dayCapFreesAt(spend, perDay, maxUnits === undefined ? undefined : { at: now, units: maxUnits });
  return {
    owner,
    name,
    ...(caps.maxUnitsPerRun === undefined ? {} : { maxUnitsPerRun: caps.maxUnitsPerRun }),
    ...(perDay === undefined ? {} : { maxUnitsPerDay: perDay }),
    ...(spend === undefined ? {} : { spentToday: spend.units }),
    ...(dayFreesAt === undefined ? {} : { dayFreesAt }),
  };
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

/**
 * The `maxUnits` of the schedule's next job (its run cap, lowered to what is left of its day cap) and
 * the caps it came from, for the job to name when it stops at it.
 */
export async function scheduleRunBudget(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  schedule: Schedule,
): Promise<{ maxUnits: number | undefined; costCap: CostCapOrigin | undefined }> {
  const now = deps.clock.now();
  const spent =
    schedule.maxUnitsPerDay === undefined
      ? undefined
      : await unitsSpentSince(
          deps,
          { tenant: schedule.tenant, source: 'schedule', keyPrefix: scheduleKeyPrefix(schedule) },
          now - dayMs,
        );
  const maxUnits = spent === undefined ? schedule.maxUnitsPerRun : runBudget(schedule, spent.units);
  return { maxUnits, costCap: costCapOrigin('schedule', schedule.name, schedule, spent, maxUnits, now) };
}

/** A schedule's caps and what its jobs of the last 24 hours were billed (`opflow schedules`, the API). */
export async function scheduleSpend(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  schedule: Schedule,
): Promise<CapFigures | undefined> {
  if (schedule.maxUnitsPerRun === undefined && schedule.maxUnitsPerDay === undefined) return undefined;
  const now = deps.clock.now();
  const spent = await unitsSpentSince(
    deps,
    { tenant: schedule.tenant, source: 'schedule', keyPrefix: scheduleKeyPrefix(schedule) },
    now - dayMs,
  );
  return capFigures(schedule, spent);
}

/** Caps and the last 24 hours' spend against them, as views show them. */
export interface CapFigures {
  maxUnitsPerRun?: number | undefined;
  maxUnitsPerDay?: number | undefined;
  /** Billed units of its jobs created in the last 24 hours. */
  spentLast24h: number;
  jobsLast24h: number;
  /** At or past the day cap: when the spend falls below it if nothing more is billed (ISO). */
  dayCapFreesAt?: string | undefined;
}

export function capFigures(
  caps: { maxUnitsPerRun?: number | undefined; maxUnitsPerDay?: number | undefined },
  spent: DaySpend,
): CapFigures {
  const frees = caps.maxUnitsPerDay === undefined ? undefined : dayCapFreesAt(spent, caps.maxUnitsPerDay);
  return {
    ...(caps.maxUnitsPerRun === undefined ? {} : { maxUnitsPerRun: caps.maxUnitsPerRun }),
    ...(caps.maxUnitsPerDay === undefined ? {} : { maxUnitsPerDay: caps.maxUnitsPerDay }),
    spentLast24h: spent.units,
    jobsLast24h: spent.jobs,
    ...(frees === undefined ? {} : { dayCapFreesAt: new Date(frees).toISOString() }),
  };
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
  const frees = dayCapFreesAt(spent, cap);
  const reason = `cost cap reached: its ${spent.jobs} job(s) of the last 24 hours were billed ${spent.units} units, maxUnitsPerDay is ${cap}${frees === undefined ? '' : `; the 24 hours' spend falls below it at ${new Date(frees).toISOString().slice(0, 16).replace('T', ' ')} UTC`} (resume it to go on)`;
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

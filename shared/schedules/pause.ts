/**
 * Pausing a schedule at run time, and what a person sees of a schedule. A pause is kept in the
 * schedule's state (the schedule state store: SQLite locally, the `SCHED#` item on aws), so every
 * process that fires the schedule (`opflow serve`, the aws `schedules` function EventBridge
 * invokes) skips its slots until it is resumed; each skipped slot is counted. A pause declared in
 * opflow.config.json (`paused`) is the config's: only editing the file (and, on aws, a deploy)
 * lifts it.
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { ScheduleState, ScheduleStateStore } from '../engine/schedule-ports';
import { scheduleSpend } from './cost-cap';
import { nextSlot } from './slots';

/** Why a pause or resume was refused (a 409 on the API, a usage error in the CLI). */
export class SchedulePauseError extends Error {
  override readonly name = 'SchedulePauseError';
}

export const pauseReasonLimit = 500;

/** Writes `change(state)` with compare-and-set, retrying when another process wrote in between. */
export async function updateScheduleState(
  states: ScheduleStateStore,
  name: string,
  now: number,
  change: (state: ScheduleState) => ScheduleState,
): Promise<ScheduleState> {
  for (let tries = 0; tries < 20; tries++) {
    const stored = await states.get(name);
    // A schedule never seen yet starts now (as the scheduler's first tick would), with nothing to catch up.
    const base: ScheduleState = stored ?? { name, lastSlot: now, skipped: 0, updatedAt: now - 1 };
    const next = { ...change(base), updatedAt: Math.max(now, base.updatedAt + 1) };
    if (await states.put(next, stored)) return next;
  }
  throw new Error(`the state of schedule ${name} kept changing; try again`);
}

/** Pauses the schedule with a reason (pausing a paused schedule replaces the reason). */
export async function pauseSchedule(
  deps: Pick<JobDeps, 'clock'>,
  states: ScheduleStateStore,
  schedule: Schedule,
  reason: string,
): Promise<ScheduleState> {
  const text = reason.trim();
  if (text === '')
    throw new SchedulePauseError('a pause needs a reason (what people see beside the schedule)');
  if (text.length > pauseReasonLimit)
    throw new SchedulePauseError(`the reason is over ${pauseReasonLimit} characters`);
  const now = deps.clock.now();
  return updateScheduleState(states, schedule.name, now, (state) => ({
    ...state,
    paused: { reason: text, at: now },
  }));
}

/**
 * Resumes the schedule: slots from now on fire again (slots missed while paused stay skipped).
 * Refused when the config file pauses it.
 */
export async function resumeSchedule(
  deps: Pick<JobDeps, 'clock'>,
  states: ScheduleStateStore,
  schedule: Schedule,
): Promise<ScheduleState> {
  if (schedule.paused) {
    throw new SchedulePauseError(
      `${schedule.name} is paused in opflow.config.json ("${schedule.paused.reason}"): remove its "paused" there to resume it`,
    );
  }
  const now = deps.clock.now();
  return updateScheduleState(states, schedule.name, now, (state) => {
    const { paused: _lifted, ...rest } = state;
    // Slots that fell while paused are not caught up: the schedule goes on from now.
    return state.paused ? { ...rest, lastSlot: Math.max(state.lastSlot ?? 0, now) } : rest;
  });
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** A schedule as the CLI's `--json`, the API and the dashboard show it. */
export async function scheduleView(deps: JobDeps, states: ScheduleStateStore, schedule: Schedule) {
  const [state, caps] = await Promise.all([states.get(schedule.name), scheduleSpend(deps, schedule)]);
  const last = state?.lastJobId ? await deps.store.get(state.lastJobId) : undefined;
  const pause = schedule.paused
    ? { reason: schedule.paused.reason, by: 'config' as const }
    : state?.paused
      ? { reason: state.paused.reason, by: 'runtime' as const, at: iso(state.paused.at) }
      : undefined;
  return {
    name: schedule.name,
    cron: schedule.cron,
    timezone: schedule.timezone,
    workflow: schedule.workflow,
    tenant: schedule.tenant,
    overlap: schedule.overlap,
    /** The reason, when paused (kept as a string for the CLI's --json of earlier releases). */
    paused: pause?.reason,
    pause,
    next: pause ? undefined : iso(nextSlot(schedule, deps.clock.now())),
    lastFired: iso(state?.lastFiredSlot),
    lastJob: last ? { id: last.id, status: last.status } : undefined,
    skipped: state?.skipped ?? 0,
    /** Its cost caps and what its jobs of the last 24 hours were billed, paused or not (absent: no caps). */
    caps,
  };
}
export type ScheduleView = Awaited<ReturnType<typeof scheduleView>>;

/**
 * Pausing a schedule at run time. A pause is kept in the
 * schedule's state (the schedule state store: SQLite locally, the `SCHED#` item on aws), so every
 * process that fires the schedule (`opflow serve`, the aws `schedules` function EventBridge
 * invokes) skips its slots until it is resumed; each skipped slot is counted. A pause declared in
 * opflow.config.json (`paused`) is the config's: only editing the file (and, on aws, a deploy)
 * lifts it. What a person sees of a schedule is schedule-view.ts's.
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { ScheduleState, ScheduleStateStore } from '../engine/schedule-ports';

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

/**
 * Firing schedules: each slot creates one job (idempotency key `schedule:<name>:<slot>`), however
 * many processes fire it and however often (two `opflow serve` on one database, a restart between
 * creating the job and recording the slot, EventBridge's at-least-once delivery on aws).
 *
 * `tick` looks at every schedule: slots since the last one handled, less those outside the
 * catch-up window, each due at its slot plus its jitter; the overlap policy decides what happens to
 * a slot whose previous job is still running (skip it, hold one back, or run it anyway).
 */
import { parseDuration, type Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import { submitJob } from '../engine/job-commands';
import { isTerminal, type Job } from '../engine/job-record';
import type { ScheduleState, ScheduleStateStore } from '../engine/schedule-ports';
import { errorMessage } from '../errors/error-message';
import { pauseAtDayCap, pauseAtRunCap, scheduleRunBudget } from './cost-cap';
import { jitterOf, slotKey, slotsBetween } from './slots';

/** A slot no older than this (plus the jitter) is on time, not missed. */
export const onTimeGraceMs = 60_000;
/** Jobs of a schedule remembered in its state (the change report and the time series read them). */
const keptRuns = 100;

export interface ScheduleRun {
  slot: number;
  jobId: string;
}

export interface ScheduleStateWithRuns extends ScheduleState {
  runs?: ScheduleRun[] | undefined;
}

export type SlotOutcome = { schedule?: string | undefined } & (
  | { slot: number; outcome: 'fired'; jobId: string; created: boolean }
  | { slot: number; outcome: 'skipped'; reason: 'overlap' | 'paused' | 'missed' | 'buffer-full' }
  | { slot: number; outcome: 'buffered' }
);

/** Creates the job of one slot (idempotent: the same slot again answers the same job). */
export async function fireSlot(
  deps: JobDeps,
  schedule: Schedule,
  slot: number,
  key: string = slotKey(schedule.name, slot),
): Promise<{ job: Job; created: boolean }> {
  const { maxUnits, costCap } = await scheduleRunBudget(deps, schedule);
  return submitJob(deps, {
    workflow: schedule.workflow,
    input: schedule.input,
    tenant: schedule.tenant,
    selection: schedule.selection,
    callbackUrl: schedule.callbackUrl,
    ...(schedule.priority === undefined ? {} : { priority: schedule.priority }),
    ...(maxUnits === undefined ? {} : { maxUnits }),
    ...(costCap === undefined ? {} : { costCap }),
    source: 'schedule',
    idempotencyKey: key,
    label: `${schedule.name} ${new Date(slot).toISOString()}`,
  });
}

/** Which of `slots` the catch-up window keeps at `now`. */
export function withinCatchUp(schedule: Schedule, slots: number[], now: number): number[] {
  const jitterMs = schedule.jitter ? parseDuration(schedule.jitter) : 0;
  const onTime = (slot: number) => slot >= now - onTimeGraceMs - jitterMs;
  const missed = slots.filter((slot) => !onTime(slot));
  const kept = slots.filter(onTime);
  if (schedule.catchUp === 'none') return kept;
  if (schedule.catchUp === 'one') return missed.length > 0 ? [missed.at(-1)!, ...kept] : kept;
  const window = parseDuration(schedule.catchUp);
  return [...missed.filter((slot) => slot >= now - window), ...kept];
}

function withRun(state: ScheduleStateWithRuns, run: ScheduleRun): ScheduleRun[] {
  return [...(state.runs ?? []).filter((item) => item.slot !== run.slot), run].slice(-keptRuns);
}

/** One pass over the schedules at the clock's now. Returns what happened to each slot handled. */
export async function tickSchedules(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedules: readonly Schedule[],
): Promise<SlotOutcome[]> {
  const outcomes: SlotOutcome[] = [];
  for (const schedule of schedules) {
    try {
      const mine: SlotOutcome[] = [];
      const capped =
        (await pauseAtRunCap(deps, states, schedule)) ?? (await pauseAtDayCap(deps, states, schedule));
      if (capped)
        deps.log?.warn('schedule: paused at its cost cap', { schedule: schedule.name, reason: capped });
      await tickOne(deps, states, schedule, mine);
      for (const outcome of mine) outcomes.push({ ...outcome, schedule: schedule.name });
    } catch (error) {
      deps.log?.error('schedule: a slot could not be handled; it is tried again on the next tick', {
        schedule: schedule.name,
        error: errorMessage(error),
      });
    }
  }
  return outcomes;
}

async function tickOne(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedule: Schedule,
  outcomes: SlotOutcome[],
): Promise<void> {
  for (let step = 0; step < 1000; step++) {
    const now = deps.clock.now();
    const state = (await states.get(schedule.name)) as ScheduleStateWithRuns | undefined;
    if (!state) {
      // First sight of the schedule: it starts now, with nothing to catch up.
      await states.put({ name: schedule.name, lastSlot: now, skipped: 0, updatedAt: now }, undefined);
      continue;
    }
    const previous = state.lastJobId ? await deps.store.get(state.lastJobId) : undefined;
    const running = previous !== undefined && !isTerminal(previous.status);
    const write = (next: Partial<ScheduleStateWithRuns>) =>
      states.put({ ...state, ...next, updatedAt: Math.max(now, state.updatedAt + 1) }, state);

    if (state.buffered !== undefined && !running) {
      const slot = state.buffered;
      const { job, created } = await fireSlot(deps, schedule, slot);
      if (
        await write({
          buffered: undefined,
          lastFiredSlot: slot,
          lastJobId: job.id,
          runs: withRun(state, { slot, jobId: job.id }),
        })
      )
        outcomes.push({ slot, outcome: 'fired', jobId: job.id, created });
      continue;
    }

    const all = slotsBetween(schedule, state.lastSlot ?? now, now, 5_000);
    if (all.length === 0) return;
    const kept = withinCatchUp(schedule, all, now);
    const firstKept = kept[0];
    const dropped = all.filter((slot) => firstKept === undefined || slot < firstKept);
    if (dropped.length > 0) {
      if (await write({ lastSlot: dropped.at(-1), skipped: state.skipped + dropped.length }))
        for (const slot of dropped) outcomes.push({ slot, outcome: 'skipped', reason: 'missed' });
      continue;
    }
    const slot = firstKept!;
    if (slot + jitterOf(schedule, slot) > now) return;
    if (schedule.paused || state.paused) {
      if (await write({ lastSlot: slot, skipped: state.skipped + 1 }))
        outcomes.push({ slot, outcome: 'skipped', reason: 'paused' });
      continue;
    }
    if (running && schedule.overlap !== 'allow-all') {
      if (schedule.overlap === 'buffer-one' && state.buffered === undefined) {
        if (await write({ lastSlot: slot, buffered: slot })) outcomes.push({ slot, outcome: 'buffered' });
      } else if (await write({ lastSlot: slot, skipped: state.skipped + 1 })) {
        outcomes.push({
          slot,
          outcome: 'skipped',
          reason: schedule.overlap === 'buffer-one' ? 'buffer-full' : 'overlap',
        });
      }
      continue;
    }
    // The previous run stopped at a cost cap after this tick's first look: pause now, not after one
    // more run (the loop then sees the pause and skips the slot).
    if (previous?.status === 'FAILED' && previous.lastError?.kind === 'cost-cap') {
      const capped =
        (await pauseAtRunCap(deps, states, schedule)) ?? (await pauseAtDayCap(deps, states, schedule));
      if (capped) {
        deps.log?.warn('schedule: paused at its cost cap', { schedule: schedule.name, reason: capped });
        continue;
      }
    }
    const { job, created } = await fireSlot(deps, schedule, slot);
    if (
      await write({
        lastSlot: slot,
        lastFiredSlot: slot,
        lastJobId: job.id,
        runs: withRun(state, { slot, jobId: job.id }),
      })
    )
      outcomes.push({ slot, outcome: 'fired', jobId: job.id, created });
  }
}

/** `opflow schedules trigger`: a job now, outside the slots (its own key), recorded as the last run. */
export async function triggerSchedule(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedule: Schedule,
): Promise<{ job: Job; created: boolean }> {
  const now = deps.clock.now();
  const fired = await fireSlot(deps, schedule, now, `${slotKey(schedule.name, now)}:manual`);
  for (let tries = 0; tries < 10; tries++) {
    const state = ((await states.get(schedule.name)) as ScheduleStateWithRuns | undefined) ?? {
      name: schedule.name,
      lastSlot: now,
      skipped: 0,
      updatedAt: now - 1,
    };
    const stored = await states.get(schedule.name);
    const next = {
      ...state,
      lastFiredSlot: now,
      lastJobId: fired.job.id,
      runs: withRun(state, { slot: now, jobId: fired.job.id }),
      updatedAt: Math.max(now, state.updatedAt + 1),
    };
    if (await states.put(next, stored)) break;
  }
  return fired;
}

/** `opflow schedules backfill`: the jobs of every slot in `[from, to]` (existing ones are kept). */
export async function backfillSchedule(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedule: Schedule,
  from: number,
  to: number,
  limit = 1000,
): Promise<{ slot: number; jobId: string; created: boolean }[]> {
  const slots = slotsBetween(schedule, from - 1, to, limit + 1);
  if (slots.length > limit) {
    throw new RangeError(
      `${schedule.name} has more than ${limit} slots between those times; backfill a shorter span`,
    );
  }
  const results: { slot: number; jobId: string; created: boolean }[] = [];
  for (const slot of slots) {
    const { job, created } = await fireSlot(deps, schedule, slot);
    results.push({ slot, jobId: job.id, created });
  }
  // Remember them as runs (time series, change reports), in slot order.
  for (let tries = 0; tries < 10 && results.length > 0; tries++) {
    const stored = (await states.get(schedule.name)) as ScheduleStateWithRuns | undefined;
    const now = deps.clock.now();
    const base: ScheduleStateWithRuns = stored ?? {
      name: schedule.name,
      lastSlot: now,
      skipped: 0,
      updatedAt: now - 1,
    };
    let runs = base.runs ?? [];
    for (const result of results)
      runs = withRun({ ...base, runs }, { slot: result.slot, jobId: result.jobId });
    runs.sort((a, b) => a.slot - b.slot);
    if (await states.put({ ...base, runs, updatedAt: Math.max(now, base.updatedAt + 1) }, stored)) break;
  }
  return results;
}

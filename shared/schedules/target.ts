/**
 * One slot delivered by a scheduler that fires each slot itself (EventBridge Scheduler on aws, at
 * least once): the same decisions as `tickSchedules`, for that one slot. A slot that comes again
 * creates nothing (the slot is the idempotency key); a slot held back by `buffer-one` runs when the
 * next event of the schedule finds the previous job ended. The cost caps are checked first, as each
 * tick does: a schedule at its run or day cap is paused, and the slot is skipped.
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import { isTerminal } from '../engine/job-record';
import type { ScheduleState, ScheduleStateStore } from '../engine/schedule-ports';
import { pauseAtDayCap, pauseAtRunCap } from './cost-cap';
import { fireSlot, type SlotOutcome } from './scheduler';

export async function handleScheduledSlot(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedule: Schedule,
  slot: number,
): Promise<SlotOutcome[]> {
  const outcomes: SlotOutcome[] = [];
  await pauseAtCostCap(deps, states, schedule);
  for (let tries = 0; tries < 10; tries++) {
    const now = deps.clock.now();
    const stored = await states.get(schedule.name);
    const state: ScheduleState = stored ?? { name: schedule.name, skipped: 0, updatedAt: 0 };
    const previous = state.lastJobId ? await deps.store.get(state.lastJobId) : undefined;
    const running = previous !== undefined && !isTerminal(previous.status);
    const runs = (jobId: string, at: number) =>
      [...(state.runs ?? []).filter((run) => run.slot !== at), { slot: at, jobId }].slice(-100);
    const write = (next: Partial<ScheduleState>) =>
      states.put({ ...state, ...next, updatedAt: Math.max(now, state.updatedAt + 1) }, stored);

    // The previous run stopped at a cost cap after the check above: pause now, not after one more
    // run (the next pass of the loop sees the pause and skips the slot), as the local tick does.
    if (previous?.status === 'FAILED' && previous.lastError?.kind === 'cost-cap') {
      if (await pauseAtCostCap(deps, states, schedule)) continue;
    }
    if (state.buffered !== undefined && !running && state.buffered !== slot) {
      const held = state.buffered;
      const { job, created } = await fireSlot(deps, schedule, held);
      if (
        await write({ buffered: undefined, lastFiredSlot: held, lastJobId: job.id, runs: runs(job.id, held) })
      )
        outcomes.push({ schedule: schedule.name, slot: held, outcome: 'fired', jobId: job.id, created });
      continue;
    }
    if (state.lastSlot !== undefined && slot <= state.lastSlot && state.lastFiredSlot !== slot) {
      // Handled already (skipped or buffered): a repeated delivery changes nothing.
      return outcomes;
    }
    if (schedule.paused || state.paused) {
      if (await write({ lastSlot: Math.max(slot, state.lastSlot ?? 0), skipped: state.skipped + 1 }))
        outcomes.push({ schedule: schedule.name, slot, outcome: 'skipped', reason: 'paused' });
      return outcomes;
    }
    if (
      running &&
      previous?.idempotencyKey !== `schedule:${schedule.name}:${new Date(slot).toISOString()}` &&
      schedule.overlap !== 'allow-all'
    ) {
      const buffer = schedule.overlap === 'buffer-one' && state.buffered === undefined;
      if (
        await write({
          lastSlot: Math.max(slot, state.lastSlot ?? 0),
          ...(buffer ? { buffered: slot } : { skipped: state.skipped + 1 }),
        })
      ) {
        outcomes.push(
          buffer
            ? { schedule: schedule.name, slot, outcome: 'buffered' }
            : {
                schedule: schedule.name,
                slot,
                outcome: 'skipped',
                reason: schedule.overlap === 'buffer-one' ? 'buffer-full' : 'overlap',
              },
        );
        return outcomes;
      }
      continue;
    }
    const { job, created } = await fireSlot(deps, schedule, slot);
    if (
      await write({
        lastSlot: Math.max(slot, state.lastSlot ?? 0),
        lastFiredSlot: slot,
        lastJobId: job.id,
        runs: runs(job.id, slot),
      })
    ) {
      outcomes.push({ schedule: schedule.name, slot, outcome: 'fired', jobId: job.id, created });
      return outcomes;
    }
  }
  return outcomes;
}

/** Pauses the schedule at its run or day cost cap, as each tick of the local scheduler does; says why. */
async function pauseAtCostCap(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedule: Schedule,
): Promise<string | undefined> {
  const capped =
    (await pauseAtRunCap(deps, states, schedule)) ?? (await pauseAtDayCap(deps, states, schedule));
  if (capped) deps.log?.warn('schedule: paused at its cost cap', { schedule: schedule.name, reason: capped });
  return capped;
}

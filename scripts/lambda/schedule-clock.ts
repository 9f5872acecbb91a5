/**
 * EventBridge Scheduler on this machine: invokes the `schedules` function at every slot of each
 * schedule of the config file (croner, the schedule's own time zone), with the event the stack's
 * schedules send (`{"schedule": <the schedule>, "slot": "<the slot's scheduled time>"}`). One timer per
 * schedule, set to its next slot only, so nothing runs between slots.
 */
import type { Schedule } from '../../shared/config/opflow-config';
import { nextSlot } from '../../shared/schedules/slots';
import { lambdaContext } from './lambda-events';

export type ScheduleTarget = (
  event: { schedule: Schedule; slot: string },
  context: unknown,
) => Promise<unknown>;

/** Node's timers hold at most about 24.8 days; a later slot is reached in steps. */
const maxTimerMs = 2 ** 31 - 1;

export function startScheduleClock(
  schedules: readonly Schedule[],
  target: ScheduleTarget,
  onError: (schedule: Schedule, error: unknown) => void,
): { stop(): void } {
  const timers = new Map<string, NodeJS.Timeout>();
  let stopped = false;
  const arm = (schedule: Schedule, after: number) => {
    if (stopped) return;
    const slot = nextSlot(schedule, after);
    if (slot === undefined) return;
    const wait = Math.min(maxTimerMs, Math.max(0, slot - Date.now()));
    const timer = setTimeout(() => {
      if (Date.now() < slot) return arm(schedule, after);
      arm(schedule, slot);
      target(
        { schedule, slot: new Date(slot).toISOString() },
        lambdaContext('opflow-schedules', 30_000),
      ).catch((error: unknown) => onError(schedule, error));
    }, wait);
    timers.set(schedule.name, timer);
  };
  for (const schedule of schedules) arm(schedule, Date.now());
  return {
    stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
    },
  };
}

/** Runs `tickSchedules` every second in `opflow serve` (one pass at a time). */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import { type SlotOutcome, tickSchedules } from './scheduler';

export function startScheduleLoop(
  deps: JobDeps,
  states: ScheduleStateStore,
  schedules: readonly Schedule[],
  onOutcome: (outcome: SlotOutcome) => void = () => undefined,
  intervalMs = 1_000,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = () => {
    if (stopped || running || schedules.length === 0) return;
    running = tickSchedules(deps, states, schedules)
      .then((outcomes) => {
        for (const outcome of outcomes) onOutcome(outcome);
      })
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  pass();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * What a person sees of a schedule (the CLI's `--json`, the job API and the dashboard): its slots,
 * its pause (the config's or one made at run time, pause.ts), its last run and its cost caps with
 * what its jobs of the last 24 hours were billed (cost-cap.ts).
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import { scheduleSpend } from './cost-cap';
import { nextSlot } from './slots';

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

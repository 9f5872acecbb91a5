// A schedule's maxUnitsPerDay on the real local backend (SQLite jobs and state) with a manual
// clock: once its jobs of the last 24 hours were billed that much, it is paused with the figures as
// the reason (shown by scheduleView, which the CLI, API and dashboard use) and its slots are skipped.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { SqliteScheduleStateStore } from '../../../shared/backends/local/sqlite-schedule-state-store';
import { ConfigFileError, parseOpflowConfig, type Schedule } from '../../../shared/config/opflow-config';
import type { EngineDeps } from '../../../shared/engine/deps';
import { ManualClock } from '../../../shared/runtime/time';
import { pauseSchedule, resumeSchedule, scheduleView } from '../../../shared/schedules/pause';
import { tickSchedules } from '../../../shared/schedules/scheduler';
import { workflows } from '../../../shared/workflows';
import { localEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
let local: LocalBackend;
let clock: ManualClock;
let deps: EngineDeps;
let states: SqliteScheduleStateStore;

const config = (overrides: Record<string, unknown>) =>
  parseOpflowConfig(
    {
      schedules: [
        {
          name: 'counts',
          cron: '0 * * * *',
          workflow: 'patent-count',
          input: { query: 'battery' },
          ...overrides,
        },
      ],
    },
    'opflow.config.json',
    new Set(workflows.keys()),
  );
const hourly = (cap: number): Schedule => config({ maxUnitsPerDay: cap, overlap: 'allow-all' }).schedules[0]!;

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2026-03-01T00:30:00Z'));
  engine = await localEngine({ clock });
  ({ local, deps } = engine);
  states = new SqliteScheduleStateStore(local.db);
});
afterEach(() => engine.close());

/** Moves to the next slot and ticks; the job it fired is billed `units` (as its calls would be). */
async function slotBilled(schedule: Schedule, units: number) {
  clock.advance(60 * 60_000);
  const outcomes = await tickSchedules(deps, states, [schedule]);
  const fired = outcomes.find((outcome) => outcome.outcome === 'fired');
  if (fired?.outcome !== 'fired') return outcomes;
  const job = (await local.store.get(fired.jobId))!;
  await local.store.commit(
    {
      ...job,
      status: 'SUCCEEDED',
      usage: { ...job.usage, billedUnits: units },
      version: job.version + 1,
      finishedAt: clock.now(),
    },
    job.version,
  );
  return outcomes;
}

describe('maxUnitsPerDay', () => {
  it('pauses the schedule once its jobs of the last 24 hours reach the cap, with the figures', async () => {
    const schedule = hourly(50);
    await tickSchedules(deps, states, [schedule]);
    expect((await slotBilled(schedule, 30)).map((o) => o.outcome)).toEqual(['fired']);
    expect((await slotBilled(schedule, 25)).map((o) => o.outcome)).toEqual(['fired']);
    // 55 of 50 spent: this tick pauses it, and the slot is skipped.
    const capped = await slotBilled(schedule, 0);
    expect(capped).toEqual([expect.objectContaining({ outcome: 'skipped', reason: 'paused' })]);
    const view = await scheduleView(deps, states, schedule);
    expect(view.pause?.by).toBe('runtime');
    expect(view.paused).toBe(
      'cost cap reached: its 2 job(s) of the last 24 hours were billed 55 units, maxUnitsPerDay is 50 (resume it to go on)',
    );
    expect(view.next).toBeUndefined();
    expect((await local.store.list({ limit: 100 })).jobs).toHaveLength(2);
  });

  it('counts only the last 24 hours and this schedule, and stays off below the cap', async () => {
    const schedule = hourly(50);
    const other = { ...hourly(50), name: 'counts-other' };
    await tickSchedules(deps, states, [schedule, other]);
    clock.advance(60 * 60_000);
    const first = await tickSchedules(deps, states, [schedule, other]);
    for (const outcome of first) {
      if (outcome.outcome !== 'fired') continue;
      const job = (await local.store.get(outcome.jobId))!;
      const units = outcome.schedule === 'counts' ? 40 : 500;
      await local.store.commit(
        {
          ...job,
          status: 'SUCCEEDED',
          usage: { ...job.usage, billedUnits: units },
          version: job.version + 1,
        },
        job.version,
      );
    }
    // `counts-other` is over its own cap; `counts` (40 of 50) is not.
    expect((await slotBilled(schedule, 0)).map((o) => o.outcome)).toEqual(['fired']);
    expect((await scheduleView(deps, states, schedule)).pause).toBeUndefined();
    // A day later the 40 units no longer count; 45 within the day still do not reach 50.
    clock.advance(24 * 60 * 60_000);
    await tickSchedules(deps, states, [schedule]);
    expect((await slotBilled(schedule, 45)).some((o) => o.outcome === 'fired')).toBe(true);
    expect((await scheduleView(deps, states, schedule)).pause).toBeUndefined();
  });

  it('leaves a pause a person gave alone, and pauses again after a resume when still over the cap', async () => {
    const schedule = hourly(10);
    await tickSchedules(deps, states, [schedule]);
    await slotBilled(schedule, 20);
    await pauseSchedule(deps, states, schedule, 'audit');
    await slotBilled(schedule, 0);
    expect((await scheduleView(deps, states, schedule)).paused).toBe('audit');
    await resumeSchedule(deps, states, schedule);
    await slotBilled(schedule, 0);
    expect((await scheduleView(deps, states, schedule)).paused).toMatch(
      /^cost cap reached: .* billed 20 units/,
    );
  });

  it('refuses a cap that is not a positive whole number, naming the field', () => {
    expect(() => config({ maxUnitsPerDay: 0 })).toThrow(ConfigFileError);
    expect(() => config({ maxUnitsPerDay: 1.5 })).toThrow(
      /schedules\[0\]\.maxUnitsPerDay: must be a whole number/,
    );
    expect(() => config({ maxUnitsPerDay: -3 })).toThrow(
      /schedules\[0\]\.maxUnitsPerDay: must be more than 0/,
    );
  });
});

// A schedule's maxUnitsPerDay on the real local backend (SQLite jobs and state) with a manual
// clock: once its jobs of the last 24 hours were billed that much, it is paused with the figures as
// the reason (shown by scheduleView, which the CLI, API and dashboard use) and its slots are skipped.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { SqliteScheduleStateStore } from '../../../shared/backends/local/sqlite-schedule-state-store';
import { ConfigFileError, parseOpflowConfig, type Schedule } from '../../../shared/config/opflow-config';
import type { EngineDeps } from '../../../shared/engine/deps';
import { runStep } from '../../../shared/engine/runner';
import type { ScheduleStateStore } from '../../../shared/engine/schedule-ports';
import { ManualClock } from '../../../shared/runtime/time';
import { pauseSchedule, resumeSchedule } from '../../../shared/schedules/pause';
import { scheduleView } from '../../../shared/schedules/schedule-view';
import { tickSchedules, triggerSchedule } from '../../../shared/schedules/scheduler';
import { handleScheduledSlot } from '../../../shared/schedules/target';
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
      // Billed at 01:30 (30) and 02:30 (25): once the 01:30 one is 24 hours old, 25 is below 50.
      "cost cap reached: its 2 job(s) of the last 24 hours were billed 55 units, maxUnitsPerDay is 50; the 24 hours' spend falls below it at 2026-03-02 01:30 UTC (resume it to go on)",
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

describe('maxUnitsPerRun', () => {
  const perRun = (cap: number): Schedule =>
    config({ maxUnitsPerRun: cap, overlap: 'allow-all' }).schedules[0]!;

  /** Fires the next slot; its job has been billed `units` before its step runs (the runner's check). */
  async function slotStopped(schedule: Schedule, units: number) {
    clock.advance(60 * 60_000);
    const outcomes = await tickSchedules(deps, states, [schedule]);
    const fired = outcomes.find((outcome) => outcome.outcome === 'fired');
    if (fired?.outcome !== 'fired') throw new Error(`no slot fired: ${JSON.stringify(outcomes)}`);
    const job = (await local.store.get(fired.jobId))!;
    const billed = { ...job, usage: { ...job.usage, billedUnits: units }, version: job.version + 1 };
    await local.store.commit(billed, job.version);
    await runStep(deps, { jobId: job.id, version: billed.version });
    return (await local.store.get(job.id))!;
  }

  it('gives each run the cap; a run that reaches it stops and pauses the schedule once, with the figures', async () => {
    const schedule = perRun(40);
    await tickSchedules(deps, states, [schedule]);
    const stopped = await slotStopped(schedule, 40);
    expect(stopped.maxUnits).toBe(40);
    expect(stopped.status).toBe('FAILED');
    expect(stopped.lastError).toMatchObject({ kind: 'cost-cap', retryable: false });
    expect(stopped.lastError?.message).toBe(
      `run cost cap of schedule counts reached: maxUnitsPerRun is 40; the job was billed 40 units and it stopped before step "${stopped.step}" (retry it with a higher --max-units to go on from there, or raise maxUnitsPerRun of counts in opflow.config.json)`,
    );
    // The next tick pauses the schedule (and skips its slot), naming the run and the figures.
    clock.advance(60 * 60_000);
    expect(await tickSchedules(deps, states, [schedule])).toEqual([
      expect.objectContaining({ outcome: 'skipped', reason: 'paused' }),
    ]);
    const view = await scheduleView(deps, states, schedule);
    expect(view.pause?.by).toBe('runtime');
    expect(view.paused).toBe(
      `run cost cap reached: job ${stopped.id} was billed 40 units, maxUnitsPerRun is 40; it stopped before step "${stopped.step}" (resume the schedule to go on; opflow retry ${stopped.id} --max-units <more> finishes that run)`,
    );
    // Resumed, the same run does not pause it again; a run below the cap does not either.
    await resumeSchedule(deps, states, schedule);
    await tickSchedules(deps, states, [schedule]);
    expect((await scheduleView(deps, states, schedule)).pause).toBeUndefined();
    const next = await slotStopped(schedule, 39);
    expect(next.lastError?.kind).not.toBe('cost-cap');
    await tickSchedules(deps, states, [schedule]);
    expect((await scheduleView(deps, states, schedule)).pause).toBeUndefined();
  });

  it('lowers a run’s cap to what is left of the day cap: a run in progress stops there and the schedule pauses with the day’s figures', async () => {
    const schedule = config({ maxUnitsPerRun: 40, maxUnitsPerDay: 50, overlap: 'allow-all' }).schedules[0]!;
    await tickSchedules(deps, states, [schedule]);
    // The first run has the whole run cap; it spends 30 of the day's 50.
    const first = await slotStopped(schedule, 30);
    expect(first.maxUnits).toBe(40);
    expect(first.lastError?.kind).not.toBe('cost-cap');
    await local.store.commit(
      { ...first, status: 'SUCCEEDED', version: first.version + 1, finishedAt: clock.now() },
      first.version,
    );
    // The second gets the 20 left, not 40: once billed that much it stops before its next step.
    const second = await slotStopped(schedule, 20);
    expect(second.maxUnits).toBe(20);
    expect(second.status).toBe('FAILED');
    expect(second.lastError?.kind).toBe('cost-cap');
    // The job names the day cap that stopped it, its figures, when the day frees up and what to change.
    expect(second.costCap).toEqual({
      owner: 'schedule',
      name: 'counts',
      maxUnitsPerRun: 40,
      maxUnitsPerDay: 50,
      spentToday: 30,
      dayFreesAt: Date.parse('2026-03-02T01:30:00Z'),
    });
    expect(second.lastError?.message).toBe(
      `day cost cap of schedule counts reached: maxUnitsPerDay is 50, its jobs of the last 24 hours had been billed 30 units when this one started, so this job could spend 20; the job was billed 20 units and it stopped before step "${second.step}". The 24 hours' spend falls below it at 2026-03-02 01:30 UTC if nothing more is billed; then retry it (opflow retry ${second.id} --max-units <more>), or raise maxUnitsPerDay of counts in opflow.config.json (schedules)`,
    );
    // The pause names the day cap, not the run cap the run never reached.
    clock.advance(60 * 60_000);
    await tickSchedules(deps, states, [schedule]);
    expect((await scheduleView(deps, states, schedule)).paused).toBe(
      "cost cap reached: its 2 job(s) of the last 24 hours were billed 50 units, maxUnitsPerDay is 50; the 24 hours' spend falls below it at 2026-03-02 01:30 UTC (resume it to go on)",
    );
    // A person's trigger past the day cap runs with the run cap.
    const { job } = await triggerSchedule(deps, states, schedule);
    expect(job.maxUnits).toBe(40);
  });

  it('on aws (a slot delivered by EventBridge Scheduler), a run that stops at its cap just after the slot’s first look pauses the schedule instead of firing once more', async () => {
    const schedule = perRun(40);
    const hour = 60 * 60_000;
    const first = await handleScheduledSlot(deps, states, schedule, Date.parse('2026-03-01T01:00:00Z'));
    const fired = first.find((outcome) => outcome.outcome === 'fired');
    if (fired?.outcome !== 'fired') throw new Error(`no slot fired: ${JSON.stringify(first)}`);
    // The run is still under way when the next slot comes: billed up to its cap, its next step not run yet.
    const job = (await local.store.get(fired.jobId))!;
    const billed = { ...job, usage: { ...job.usage, billedUnits: 40 }, version: job.version + 1 };
    await local.store.commit(billed, job.version);
    // It stops at the cap between the slot's cap check (the first read of the state) and the fire.
    let reads = 0;
    const racing: ScheduleStateStore = {
      async get(name) {
        const state = await states.get(name);
        reads += 1;
        if (reads === 2) await runStep(deps, { jobId: job.id, version: billed.version });
        return state;
      },
      list: () => states.list(),
      put: (next, expected) => states.put(next, expected),
    };
    clock.advance(hour);
    const outcomes = await handleScheduledSlot(deps, racing, schedule, Date.parse('2026-03-01T02:00:00Z'));
    expect((await local.store.get(job.id))!.lastError?.kind).toBe('cost-cap');
    expect(outcomes).toEqual([expect.objectContaining({ outcome: 'skipped', reason: 'paused' })]);
    expect((await scheduleView(deps, states, schedule)).paused).toMatch(/^run cost cap reached: job /);
    expect((await local.store.list({ limit: 10 })).jobs.map((listed) => listed.id)).toEqual([job.id]);
  });

  it('refuses a cap that is not a positive whole number, naming the field', () => {
    expect(() => config({ maxUnitsPerRun: 2.5 })).toThrow(
      /schedules\[0\]\.maxUnitsPerRun: must be a whole number/,
    );
  });
});

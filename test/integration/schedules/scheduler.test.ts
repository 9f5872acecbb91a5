// Schedules on the real local backend (SQLite jobs and state) with a manual clock: slots fire
// jobs, a doubled firing (two schedulers on one database, a tick repeated) makes one job per slot,
// daylight saving time (skipped and repeated hour), overlap policies, catch-up, pause, backfill.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { SqliteScheduleStateStore } from '../../../shared/backends/local/sqlite-schedule-state-store';
import { parseOpflowConfig, type Schedule } from '../../../shared/config/opflow-config';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { Job } from '../../../shared/engine/job-record';
import { ManualClock } from '../../../shared/runtime/time';
import { backfillSchedule, tickSchedules, triggerSchedule } from '../../../shared/schedules/scheduler';
import { jitterOf } from '../../../shared/schedules/slots';
import { workflows } from '../../../shared/workflows';
import { localEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
let local: LocalBackend;
let clock: ManualClock;
let deps: EngineDeps;
let states: SqliteScheduleStateStore;

const schedule = (overrides: Record<string, unknown>): Schedule =>
  parseOpflowConfig(
    {
      schedules: [
        {
          name: 'counts',
          cron: '0 6 * * *',
          workflow: 'patent-count',
          input: { query: 'battery' },
          ...overrides,
        },
      ],
    },
    'opflow.config.json',
    new Set(workflows.keys()),
  ).schedules[0]!;

const jobs = async (): Promise<Job[]> => (await local.store.list({ limit: 1000 })).jobs;
const at = (iso: string) => Date.parse(iso);

beforeEach(async () => {
  clock = new ManualClock(at('2026-03-01T00:00:00Z'));
  engine = await localEngine({ clock });
  ({ local, deps } = engine);
  states = new SqliteScheduleStateStore(local.db);
});
afterEach(() => engine.close());

/** Ticks every `stepMs` of clock time up to `until` (time skipped, nothing slept). */
async function runUntil(schedules: Schedule[], until: number, stepMs = 60_000, store = states) {
  const outcomes = [];
  while (clock.now() < until) {
    clock.advance(stepMs);
    outcomes.push(...(await tickSchedules(deps, store, schedules)));
  }
  return outcomes;
}

/** Ends every job (as the workers would). */
async function finishAll() {
  for (const job of await jobs()) {
    if (job.status === 'SUCCEEDED') continue;
    await local.store.commit(
      { ...job, status: 'SUCCEEDED', version: job.version + 1, finishedAt: clock.now() },
      job.version,
    );
  }
}

describe('schedules', () => {
  it('fires one job per slot, with the slot as idempotency key', async () => {
    const daily = schedule({ overlap: 'allow-all' });
    await tickSchedules(deps, states, [daily]);
    await runUntil([daily], at('2026-03-04T00:00:00Z'), 10 * 60_000);
    const created = await jobs();
    expect(created.map((job) => job.idempotencyKey).sort()).toEqual([
      'schedule:counts:2026-03-01T06:00:00.000Z',
      'schedule:counts:2026-03-02T06:00:00.000Z',
      'schedule:counts:2026-03-03T06:00:00.000Z',
    ]);
    expect(created.every((job) => job.source === 'schedule' && job.workflow === 'patent-count')).toBe(true);
    const state = await states.get('counts');
    expect(state?.runs?.map((run) => new Date(run.slot).toISOString())).toEqual([
      '2026-03-01T06:00:00.000Z',
      '2026-03-02T06:00:00.000Z',
      '2026-03-03T06:00:00.000Z',
    ]);
  });

  it('a doubled slot makes one job: two schedulers on one database, repeated ticks, lost state', async () => {
    const daily = schedule({ overlap: 'allow-all' });
    const other = new SqliteScheduleStateStore(local.db);
    await tickSchedules(deps, states, [daily]);
    clock.set(at('2026-03-01T06:00:30Z'));
    const fired = await Promise.all([
      tickSchedules(deps, states, [daily]),
      tickSchedules(deps, other, [daily]),
      tickSchedules(deps, states, [daily]),
    ]);
    expect(fired.flat().filter((o) => o.outcome === 'fired').length).toBeGreaterThanOrEqual(1);
    expect(await jobs()).toHaveLength(1);
    // The state write lost (a crash after the job was created): the slot fires again, creating nothing.
    const state = (await states.get('counts'))!;
    await states.put(
      { ...state, lastSlot: at('2026-03-01T05:00:00Z'), updatedAt: state.updatedAt + 1 },
      state,
    );
    const again = await tickSchedules(deps, states, [daily]);
    expect(again).toEqual([expect.objectContaining({ outcome: 'fired', created: false })]);
    expect(await jobs()).toHaveLength(1);
  });

  it('DST: a slot in the skipped hour runs once, a slot in the repeated hour runs once (Europe/Berlin)', async () => {
    const night = schedule({ cron: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'allow-all' });
    clock.set(at('2026-03-28T12:00:00Z'));
    await tickSchedules(deps, states, [night]);
    await runUntil([night], at('2026-03-30T12:00:00Z'), 5 * 60_000);
    await finishAll();
    const spring = (await jobs()).map((job) => job.idempotencyKey);
    // 29 March 2026: 02:00 jumps to 03:00, so 02:30 does not exist: it runs once, at 03:00 CEST.
    expect(spring.sort()).toEqual([
      'schedule:counts:2026-03-29T01:00:00.000Z',
      'schedule:counts:2026-03-30T00:30:00.000Z',
    ]);

    clock.set(at('2026-10-24T12:00:00Z'));
    await runUntil([night], at('2026-10-26T12:00:00Z'), 5 * 60_000);
    const autumn = (await jobs())
      .map((job) => job.idempotencyKey)
      .filter((key) => /-10-2[56]T/.test(key ?? ''));
    // 25 October 2026: 03:00 goes back to 02:00, so 02:30 happens twice: it runs once (the first).
    expect(autumn.sort()).toEqual([
      'schedule:counts:2026-10-25T00:30:00.000Z',
      'schedule:counts:2026-10-26T01:30:00.000Z',
    ]);
  });

  it('overlap skip (the default): a slot whose previous job still runs is skipped', async () => {
    const hourly = schedule({ cron: '0 * * * *' });
    await tickSchedules(deps, states, [hourly]);
    const outcomes = await runUntil([hourly], at('2026-03-01T03:30:00Z'));
    expect(outcomes.map((o) => o.outcome)).toEqual(['fired', 'skipped', 'skipped']);
    expect(await jobs()).toHaveLength(1);
    await finishAll();
    const next = await runUntil([hourly], at('2026-03-01T04:30:00Z'));
    expect(next.map((o) => o.outcome)).toEqual(['fired']);
    expect((await states.get('counts'))?.skipped).toBe(2);
  });

  it('overlap buffer-one holds one slot back and runs it when the job ends; allow-all runs all', async () => {
    const hourly = schedule({ cron: '0 * * * *', overlap: 'buffer-one' });
    await tickSchedules(deps, states, [hourly]);
    const outcomes = await runUntil([hourly], at('2026-03-01T03:30:00Z'));
    expect(outcomes.map((o) => o.outcome)).toEqual(['fired', 'buffered', 'skipped']);
    await finishAll();
    const after = await tickSchedules(deps, states, [hourly]);
    expect(after).toEqual([
      expect.objectContaining({ outcome: 'fired', slot: at('2026-03-01T02:00:00Z'), created: true }),
    ]);

    const all = schedule({ name: 'all', cron: '0 * * * *', overlap: 'allow-all' });
    await tickSchedules(deps, states, [all]);
    const fired = await runUntil([all], at('2026-03-01T06:30:00Z'));
    expect(fired.filter((o) => o.outcome === 'fired')).toHaveLength(3);
  });

  it('catch-up after downtime: one slot by default, none, or a window', async () => {
    const hourly = (catchUp: string, name: string) =>
      schedule({ name, cron: '0 * * * *', catchUp, overlap: 'allow-all' });
    const schedules = [hourly('one', 'one'), hourly('none', 'none'), hourly('3h', 'window')];
    await tickSchedules(deps, states, schedules);
    clock.set(at('2026-03-01T10:20:00Z')); // down from 00:00 to 10:20
    const outcomes = await tickSchedules(deps, states, schedules);
    expect(outcomes.filter((o) => o.outcome === 'fired')).toHaveLength(4);
    const keys = (await jobs()).map((job) => job.idempotencyKey!).sort();
    expect(keys.filter((key) => key.startsWith('schedule:one:'))).toEqual([
      'schedule:one:2026-03-01T10:00:00.000Z',
    ]);
    expect(keys.filter((key) => key.startsWith('schedule:none:'))).toEqual([]);
    expect(keys.filter((key) => key.startsWith('schedule:window:'))).toEqual([
      'schedule:window:2026-03-01T08:00:00.000Z',
      'schedule:window:2026-03-01T09:00:00.000Z',
      'schedule:window:2026-03-01T10:00:00.000Z',
    ]);
  });

  it('a paused schedule does not fire; jitter delays a slot by the same amount everywhere', async () => {
    const paused = schedule({ name: 'paused', cron: '0 * * * *', paused: { reason: 'budget review' } });
    const jittered = schedule({ name: 'jittered', cron: '0 * * * *', jitter: '10m' });
    await tickSchedules(deps, states, [paused, jittered]);
    const slot = at('2026-03-01T01:00:00Z');
    const delay = jitterOf(jittered, slot);
    expect(delay).toBeLessThan(10 * 60_000);
    clock.set(slot + delay - 1);
    expect(await tickSchedules(deps, states, [jittered])).toEqual([]);
    clock.set(slot + delay);
    expect(await tickSchedules(deps, states, [paused, jittered])).toEqual([
      expect.objectContaining({ outcome: 'skipped', reason: 'paused', slot }),
      expect.objectContaining({ outcome: 'fired', slot }),
    ]);
  });

  it('backfill runs every past slot once (twice is no more), trigger runs one now', async () => {
    const daily = schedule({});
    const first = await backfillSchedule(
      deps,
      states,
      daily,
      at('2026-02-01T00:00:00Z'),
      at('2026-02-05T06:00:00Z'),
    );
    expect(first.map((r) => r.created)).toEqual([true, true, true, true, true]);
    const second = await backfillSchedule(
      deps,
      states,
      daily,
      at('2026-02-03T00:00:00Z'),
      at('2026-02-07T00:00:00Z'),
    );
    expect(second.map((r) => r.created)).toEqual([false, false, false, true]);
    expect(await jobs()).toHaveLength(6);
    await expect(
      backfillSchedule(deps, states, schedule({ cron: '* * * * *' }), 0, at('2026-02-01T00:00:00Z')),
    ).rejects.toThrow(/more than 1000 slots/);
    const triggered = await triggerSchedule(deps, states, daily);
    expect(triggered.created).toBe(true);
    expect((await states.get('counts'))?.lastJobId).toBe(triggered.job.id);
  });
});

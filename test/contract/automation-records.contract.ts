/**
 * The contracts of the records the dashboard reads besides the jobs, run against both backends by
 * automation-records.{local,aws}.test.ts: the job history (SQLite `job_events`, aws `HIST#`
 * items), the record of webhook deliveries (SQLite `webhook_deliveries`, aws `HOOKLOG`) and the
 * schedule state with its run-time pause (SQLite `schedule_state`, aws `SCHED#`).
 */
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { parseOpflowConfig, type Schedule } from '../../shared/config/opflow-config';
import type { JobHistory } from '../../shared/engine/history';
import type { Job } from '../../shared/engine/job-record';
import type { ScheduleStateStore } from '../../shared/engine/schedule-ports';
import type { WebhookDelivery, WebhookDeliveryLog } from '../../shared/engine/webhook-deliveries';
import { pauseSchedule, resumeSchedule, SchedulePauseError } from '../../shared/schedules/pause';
import { makeJob, T0 } from '../support/factories';

/**
 * Now, as the base of the records' times: both backends drop history events and deliveries older
 * than their retention (30 days) as they write, so records of T0 (2025) would be pruned at once.
 */
const recent = Date.now();
/** A job created just now. */
const freshJob = (overrides: Partial<Job> = {}) =>
  makeJob({ createdAt: recent, updatedAt: recent, nextRunAt: recent, ...overrides });

/** The job after `changes`, as a commit would write it (next version, later time). */
function committed(job: Job, changes: Partial<Job>): Job {
  return { ...job, ...changes, version: job.version + 1, updatedAt: job.updatedAt + 1_000 };
}

export function describeJobHistoryContract(name: string, make: () => Promise<JobHistory>): void {
  describe(`${name} (job history contract)`, () => {
    it('gives back one event per version, oldest first, with the figures the timeline needs', async () => {
      const history = await make();
      const queued = freshJob();
      const running = committed(queued, { status: 'RUNNING', attempts: 1 });
      const waiting = committed(running, {
        status: 'AWAITING_INPUT',
        step: 'confirm',
        usage: { ...running.usage, calls: 2, billedUnits: 7, callMs: 340 },
        pending: {
          step: 'confirm',
          nextStep: 'search',
          prompt: 'Pick the features',
          options: [{ id: 'f1', label: 'hinge', preselected: true }],
          min: 1,
          max: 1,
          offeredAt: recent,
        },
      });
      const failed = committed(waiting, {
        status: 'FAILED',
        lastError: {
          kind: 'upstream-failed',
          message: 'the summary failed upstream (status 3)',
          step: 'confirm',
          code: 3,
          correlationId: 'corr-42',
          retryable: false,
          at: recent + 3_000,
        },
      });
      // Recorded out of order, as concurrent notifications may be.
      for (const job of [queued, waiting, running, failed]) history.record(job);
      await history.flush?.();

      const events = await history.list(queued.id);
      expect(events.map((event) => [event.version, event.status])).toEqual([
        [1, 'QUEUED'],
        [2, 'RUNNING'],
        [3, 'AWAITING_INPUT'],
        [4, 'FAILED'],
      ]);
      expect(events[1]).toMatchObject({
        jobId: queued.id,
        step: 'submit',
        attempts: 1,
        at: recent + 1_000,
        run: 0,
      });
      expect(events[2]).toMatchObject({
        awaiting: 'confirm',
        usage: { calls: 2, billedUnits: 7, callMs: 340 },
      });
      expect(events[3]?.error).toMatchObject({ kind: 'upstream-failed', code: 3, correlationId: 'corr-42' });
    });

    it('keeps the first event of a version recorded twice, and keeps jobs apart', async () => {
      const history = await make();
      const job = freshJob();
      const other = freshJob();
      history.record(job);
      await history.flush?.();
      // A repeated notification of version 1 with other content changes nothing.
      history.record({ ...job, status: 'RUNNING', step: 'elsewhere' });
      history.record(other);
      await history.flush?.();
      const events = await history.list(job.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ status: 'QUEUED', step: 'submit' });
      expect((await history.list(other.id)).map((event) => event.jobId)).toEqual([other.id]);
      expect(await history.list('no-such-job')).toEqual([]);
    });

    it('counts the runs of a retried job', async () => {
      const history = await make();
      const job = freshJob({ status: 'FAILED' });
      const retried = committed(job, {
        status: 'QUEUED',
        runs: [
          {
            status: 'FAILED',
            step: 'submit',
            usage: job.usage,
            retriedAt: recent + 1_000,
            retriedFrom: 'submit',
            fromStart: false,
          },
        ],
      });
      history.record(job);
      history.record(retried);
      await history.flush?.();
      expect((await history.list(job.id)).map((event) => event.run)).toEqual([0, 1]);
    });
  });
}

let deliveryClock = recent;
function delivery(overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  deliveryClock += 1_000;
  return {
    // Time-ordered, as the webhook handler makes them.
    id: ulid(deliveryClock),
    source: 'tracker',
    webhookId: `msg_${deliveryClock}`,
    at: deliveryClock,
    status: 202,
    jobId: ulid(deliveryClock),
    created: true,
    tenant: 'default',
    ...overrides,
  };
}

/** Every delivery of the query, following the cursors (a page may be short and still have one). */
async function everyDelivery(
  log: WebhookDeliveryLog,
  query: { source?: string; tenant?: string; limit: number },
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await log.list({ ...query, cursor });
    pages++;
    expect(page.deliveries.length).toBeLessThanOrEqual(query.limit);
    ids.push(...page.deliveries.map((entry) => entry.id));
    cursor = page.cursor;
  } while (cursor !== undefined && pages < 50);
  return { ids, pages };
}

export function describeWebhookDeliveriesContract(
  name: string,
  make: () => Promise<WebhookDeliveryLog>,
): void {
  describe(`${name} (webhook delivery record contract)`, () => {
    it('lists deliveries newest first, every field as recorded', async () => {
      const log = await make();
      const accepted = delivery();
      const refused = delivery({
        webhookId: undefined,
        status: 401,
        jobId: undefined,
        created: undefined,
        error: { code: 'unauthorized', message: 'the webhook-signature does not match' },
      });
      const repeated = delivery({ jobId: accepted.jobId, created: false });
      for (const entry of [accepted, refused, repeated]) await log.record(entry);
      const page = await log.list({ limit: 50 });
      expect(page.deliveries).toEqual([repeated, refused, accepted]);
      expect(page.deliveries[1]?.webhookId).toBeUndefined();
      expect(page.cursor).toBeUndefined();
    });

    it('pages through every delivery exactly once, newest first', async () => {
      const log = await make();
      const recorded: WebhookDelivery[] = [];
      for (let n = 0; n < 7; n++) recorded.push(delivery());
      for (const entry of recorded) await log.record(entry);
      const { ids, pages } = await everyDelivery(log, { limit: 3 });
      expect(ids).toEqual(recorded.map((entry) => entry.id).reverse());
      expect(pages).toBeGreaterThanOrEqual(3);
    });

    it('filters by source and by tenant, across pages', async () => {
      const log = await make();
      const recorded = [
        delivery({ source: 'tracker' }),
        delivery({ source: 'crm', tenant: 'acme' }),
        delivery({ source: 'tracker' }),
        delivery({ source: 'crm', tenant: 'acme' }),
        delivery({ source: 'tracker' }),
        delivery({ source: 'crm', tenant: 'acme' }),
      ];
      for (const entry of recorded) await log.record(entry);
      const newestFirst = (source: string) =>
        recorded
          .filter((entry) => entry.source === source)
          .map((entry) => entry.id)
          .reverse();
      expect((await everyDelivery(log, { source: 'tracker', limit: 2 })).ids).toEqual(newestFirst('tracker'));
      expect((await everyDelivery(log, { tenant: 'acme', limit: 2 })).ids).toEqual(newestFirst('crm'));
      expect((await everyDelivery(log, { source: 'tracker', tenant: 'acme', limit: 5 })).ids).toEqual([]);
    });

    it('refuses a cursor it did not hand out with a RangeError', async () => {
      const log = await make();
      await log.record(delivery());
      await expect(log.list({ limit: 5, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(RangeError);
    });
  });
}

function schedule(fields: Record<string, unknown> = {}): Schedule {
  const config = parseOpflowConfig(
    {
      schedules: [
        {
          name: 'weekly-count',
          cron: '0 6 * * 1',
          workflow: 'patent-count',
          input: { query: 'x' },
          ...fields,
        },
      ],
    },
    'opflow.config.json',
  );
  return config.schedules[0]!;
}

export function describeScheduleStateContract(
  name: string,
  make: (names: string[]) => Promise<ScheduleStateStore>,
): void {
  describe(`${name} (schedule state contract)`, () => {
    it('writes with compare-and-set: one first write, then only from the state last read', async () => {
      const states = await make(['weekly-count']);
      expect(await states.get('weekly-count')).toBeUndefined();
      const first = { name: 'weekly-count', lastSlot: T0, skipped: 0, updatedAt: T0 };
      const [a, b] = await Promise.all([
        states.put(first, undefined),
        states.put({ ...first, skipped: 9 }, undefined),
      ]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      const stored = (await states.get('weekly-count'))!;
      const next = { ...stored, lastFiredSlot: T0, lastJobId: 'job-1', updatedAt: T0 + 1 };
      expect(await states.put(next, stored)).toBe(true);
      // A writer that read before that write is refused, and changes nothing.
      expect(await states.put({ ...stored, skipped: 5, updatedAt: T0 + 2 }, stored)).toBe(false);
      expect(await states.get('weekly-count')).toEqual(next);
      expect(await states.list()).toEqual([next]);
    });

    it('keeps a pause with its reason and time until resumed, the rest of the state intact', async () => {
      const states = await make(['weekly-count']);
      const weekly = schedule();
      let now = T0;
      const clock = { now: () => now };
      await states.put(
        { name: 'weekly-count', lastSlot: T0 - 1_000, lastJobId: 'job-1', skipped: 2, updatedAt: T0 - 1_000 },
        undefined,
      );
      await pauseSchedule({ clock }, states, weekly, '  supplier audit  ');
      expect(await states.get('weekly-count')).toMatchObject({
        paused: { reason: 'supplier audit', at: T0 },
        lastJobId: 'job-1',
        skipped: 2,
      });
      // Pausing again replaces the reason; resuming lifts it and goes on from now.
      now = T0 + 60_000;
      await pauseSchedule({ clock }, states, weekly, 'audit extended');
      expect((await states.get('weekly-count'))?.paused).toEqual({
        reason: 'audit extended',
        at: T0 + 60_000,
      });
      now = T0 + 120_000;
      await resumeSchedule({ clock }, states, weekly);
      const resumed = await states.get('weekly-count');
      expect(resumed?.paused).toBeUndefined();
      expect(resumed).toMatchObject({ lastSlot: T0 + 120_000, lastJobId: 'job-1', skipped: 2 });
    });

    it('pauses a schedule never fired yet, and lets concurrent pauses all land on one state', async () => {
      const states = await make(['weekly-count']);
      const weekly = schedule();
      const clock = { now: () => T0 };
      await Promise.all(
        ['first', 'second', 'third'].map((reason) => pauseSchedule({ clock }, states, weekly, reason)),
      );
      const state = await states.get('weekly-count');
      expect(['first', 'second', 'third']).toContain(state?.paused?.reason);
      expect(state).toMatchObject({ name: 'weekly-count', skipped: 0 });
    });

    it('refuses to resume a schedule paused in the config file, and a pause without a reason', async () => {
      const states = await make(['weekly-count']);
      const clock = { now: () => T0 };
      const frozen = schedule({ paused: { reason: 'budget' } });
      await expect(resumeSchedule({ clock }, states, frozen)).rejects.toThrow(SchedulePauseError);
      await expect(pauseSchedule({ clock }, states, schedule(), '   ')).rejects.toThrow(/needs a reason/);
      expect(await states.get('weekly-count')).toBeUndefined();
    });
  });
}

// A schedule slot on the aws backend (DynamoDB Local jobs and schedule state, fauxqs SQS), as the
// EventBridge Scheduler target receives it: delivered three times (at least once), one job; a slot
// whose previous job still runs is skipped; a paused schedule fires nothing; a schedule whose jobs of
// the day were billed its maxUnitsPerDay is paused at its next slot, which fires nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { DynamoDbJobStore, S3ReportStore, SqsWorkQueue } from '../../shared/backends/aws';
import { DynamoDbCallbackOutbox } from '../../shared/backends/aws/dynamodb-callback-outbox';
import { DynamoDbScheduleStateStore } from '../../shared/backends/aws/dynamodb-schedule-state-store';
import { parseOpflowConfig } from '../../shared/config/opflow-config';
import type { EngineDeps } from '../../shared/engine/deps';
import { writeJobReport } from '../../shared/reports/write-job-report';
import { handleScheduledSlot } from '../../shared/schedules/target';
import { workflows } from '../../shared/workflows';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

/** The job side of the engine on the emulators, with a settable clock. */
async function jobSide(start: number) {
  const tableName = await emulators.createTable();
  const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
  const store = new DynamoDbJobStore({ client: emulators.clients.documents, tableName, reports });
  const clock = { at: start };
  const deps: EngineDeps = {
    store,
    queue: new SqsWorkQueue({ client: emulators.clients.sqs, queueUrl: emulators.createQueue().queueUrl }),
    reports,
    keys: { getKey: async () => undefined, refresh: async () => undefined },
    rateLimiter: {
      take: async () => ({ granted: true }),
      throttled: async () => {},
      succeeded: async () => {},
    },
    clock: { now: () => clock.at },
    random: () => 0.5,
    client: {} as EngineDeps['client'],
    workflows,
    writeReport: writeJobReport,
    callbacks: { outbox: new DynamoDbCallbackOutbox(emulators.clients.documents, tableName), policy: {} },
  };
  return { tableName, store, deps, clock };
}

it('a slot delivered three times makes one job; overlap skip and pause hold', {
  timeout: 120_000,
}, async () => {
  const { tableName, store, deps, clock } = await jobSide(Date.parse('2026-01-05T06:00:05Z'));
  const states = new DynamoDbScheduleStateStore(emulators.clients.documents, tableName, ['morning']);
  const { schedules } = parseOpflowConfig(
    {
      schedules: [
        { name: 'morning', cron: '0 6 * * *', workflow: 'patent-count', input: { query: 'battery' } },
        {
          name: 'paused',
          cron: '0 6 * * *',
          workflow: 'patent-count',
          input: { query: 'x' },
          paused: { reason: 'r' },
        },
      ],
    },
    'opflow.config.json',
    new Set(workflows.keys()),
  );
  const slot = Date.parse('2026-01-05T06:00:00Z');
  const results = await Promise.all(
    [0, 1, 2].map(() => handleScheduledSlot(deps, states, schedules[0]!, slot)),
  );
  const fired = results.flat().filter((o) => o.outcome === 'fired');
  expect(new Set(fired.map((o) => (o as { jobId: string }).jobId)).size).toBe(1);
  const jobs = (await store.list({ limit: 100 })).jobs;
  expect(jobs.map((job) => job.idempotencyKey)).toEqual(['schedule:morning:2026-01-05T06:00:00.000Z']);
  // The next day's slot while that job is still QUEUED: skipped (overlap skip, the default).
  clock.at = Date.parse('2026-01-06T06:00:02Z');
  expect(await handleScheduledSlot(deps, states, schedules[0]!, Date.parse('2026-01-06T06:00:00Z'))).toEqual([
    expect.objectContaining({ outcome: 'skipped', reason: 'overlap' }),
  ]);
  expect(await handleScheduledSlot(deps, states, schedules[1]!, slot)).toEqual([
    expect.objectContaining({ outcome: 'skipped', reason: 'paused' }),
  ]);
  expect((await store.list({ limit: 100 })).jobs).toHaveLength(1);
  expect((await states.list())[0]).toMatchObject({ name: 'morning', skipped: 1, lastFiredSlot: slot });
});

it('pauses a schedule at its day cost cap: the next slot fires nothing and says why', {
  timeout: 120_000,
}, async () => {
  const { tableName, store, deps, clock } = await jobSide(Date.parse('2026-01-05T06:00:05Z'));
  const states = new DynamoDbScheduleStateStore(emulators.clients.documents, tableName, ['hourly']);
  const { schedules } = parseOpflowConfig(
    {
      schedules: [
        {
          name: 'hourly',
          cron: '0 * * * *',
          workflow: 'patent-count',
          input: { query: 'battery' },
          maxUnitsPerDay: 5,
        },
      ],
    },
    'opflow.config.json',
    new Set(workflows.keys()),
  );
  const schedule = schedules[0]!;
  const [fired] = await handleScheduledSlot(deps, states, schedule, Date.parse('2026-01-05T06:00:00Z'));
  expect(fired).toMatchObject({ outcome: 'fired', created: true });
  // Its job ends, billed over the day's cap.
  const job = (await store.get((fired as { jobId: string }).jobId))!;
  const ended = {
    ...job,
    status: 'SUCCEEDED' as const,
    usage: { ...job.usage, billedUnits: 8 },
    version: job.version + 1,
  };
  expect(await store.commit(ended, job.version)).toBe(true);
  clock.at = Date.parse('2026-01-05T07:00:03Z');
  expect(await handleScheduledSlot(deps, states, schedule, Date.parse('2026-01-05T07:00:00Z'))).toEqual([
    expect.objectContaining({ outcome: 'skipped', reason: 'paused' }),
  ]);
  const [state] = await states.list();
  expect(state?.paused?.reason).toMatch(
    /cost cap reached: its 1 job\(s\) of the last 24 hours were billed 8 units, maxUnitsPerDay is 5/,
  );
  expect((await store.list({ limit: 100 })).jobs).toHaveLength(1);
});

// The aws sender's logic (shared/runtime/lambda/callback-sender.ts) and the notifier the functions
// that commit jobs use (shared/callbacks/notifier.ts), over the real SQLite outbox and job store and
// a real receiver on 127.0.0.1; the sender is handed stream records of due outbox entries, as the
// job table's stream hands them (the DynamoDB side is the e2e suite's).
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import { type LocalDatabase, openLocalDatabase } from '../../../shared/backends/local/database';
import {
  LocalCallbackSecrets,
  SqliteCallbackOutbox,
} from '../../../shared/backends/local/sqlite-callback-outbox';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import { createCallbackNotifier } from '../../../shared/callbacks/notifier';
import type { CallbackSenderDeps } from '../../../shared/callbacks/sender';
import type { CallbackOutboxEntry } from '../../../shared/engine/callback-ports';
import {
  CallbackEntriesFailedError,
  createCallbackSenderHandler,
} from '../../../shared/runtime/lambda/callback-sender';
import { createObservability } from '../../../shared/runtime/lambda/observability';
import { ManualClock } from '../../../shared/runtime/time';
import { makeJob, T0 } from '../../support/factories';
import { type CountingReceiver, startCountingReceiver } from './counting-receiver';

const secret = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;
/** The stream record of an outbox entry item written due (`PK` CBQ), or of anything else. */
const entryRecord = (jobId: string, pk = 'CBQ'): DynamoDBRecord => ({
  eventName: 'INSERT',
  dynamodb: {
    Keys: { PK: { S: pk }, SK: { S: `0000000000000#${jobId}` } },
    NewImage: { PK: { S: pk }, jobId: { S: jobId }, due: { BOOL: true } },
  },
});
const event = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

describe('the aws callback sender and notifier', () => {
  let receiver: CountingReceiver;
  let url: string;
  let db: LocalDatabase;
  let store: SqliteJobStore;
  let outbox: SqliteCallbackOutbox;
  let clock: ManualClock;
  let woken: CallbackOutboxEntry[];
  let deps: CallbackSenderDeps;

  beforeEach(async () => {
    receiver = await startCountingReceiver();
    url = receiver.url;
    db = openLocalDatabase(':memory:');
    store = new SqliteJobStore(db);
    outbox = new SqliteCallbackOutbox(db);
    clock = new ManualClock(T0);
    woken = [];
    deps = {
      store,
      outbox,
      secrets: new LocalCallbackSecrets(db, { OPFLOW_CALLBACK_SECRET: secret }),
      clock,
      send: { policy: { allowHosts: [new URL(url).host] } },
      wake: async (entry) => {
        woken.push(entry);
      },
    };
  });
  afterEach(() => {
    receiver.server.close();
    db.close();
  });

  const handler = (overrides: Partial<CallbackSenderDeps> = {}) =>
    createCallbackSenderHandler({ deps: { ...deps, ...overrides }, observability: createObservability() });

  it('delivers the due entries a batch names, leaves one not yet due at its time, drops what is not an entry', async () => {
    const due = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    const later = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    for (const job of [due, later]) await store.create(job);
    await outbox.add(due.id, T0);
    await outbox.add(later.id, T0 + 2 * 3_600_000);
    const answer = await handler().handle(
      event(entryRecord(due.id), entryRecord(later.id), entryRecord('gone'), entryRecord(due.id, 'JOB#x'), {
        eventName: 'INSERT',
        dynamodb: {},
      }),
      lambdaContext('opflow-callbacks', 70_000),
    );
    expect(answer.result).toMatchObject({ attempted: 1, delivered: 1, failed: [] });
    expect(receiver.received()).toBe(1);
    // Not due for two hours: it stays in the outbox at its time (the sweeper marks it due then).
    expect(await outbox.entryOf(later.id)).toEqual({ jobId: later.id, dueAt: T0 + 2 * 3_600_000 });
    expect(await outbox.entryOf(due.id)).toBeUndefined();
  });

  it('takes entries beyond a host’s bound in a later pass of the same invocation', async () => {
    const jobs = [1, 2, 3, 4, 5].map(() =>
      makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url }),
    );
    for (const job of jobs) {
      await store.create(job);
      await outbox.add(job.id, T0);
    }
    const answer = await handler().handle(
      event(...jobs.map((job) => entryRecord(job.id))),
      lambdaContext('opflow-callbacks', 70_000),
    );
    // Two at once to one host: five take three passes, every one delivered.
    expect(answer.result).toMatchObject({ attempted: 5, delivered: 5, deferred: 3 + 1 });
    expect(receiver.received()).toBe(5);
    for (const job of jobs) expect(await outbox.entryOf(job.id)).toBeUndefined();
  });

  it('fails the invocation when a job could not be handled; its entry comes due again after its lease', async () => {
    const job = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    await store.create(job);
    await outbox.add(job.id, T0);
    const failing = Object.create(store) as SqliteJobStore;
    failing.get = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    await expect(
      handler({ store: failing }).handle(
        event(entryRecord(job.id)),
        lambdaContext('opflow-callbacks', 70_000),
      ),
    ).rejects.toThrow(CallbackEntriesFailedError);
    const entry = await outbox.entryOf(job.id);
    expect(entry!.dueAt).toBeGreaterThan(T0);
    expect(entry!.dueAt).toBeLessThanOrEqual(T0 + 60_000);
  });

  it('the notifier wakes the sender for the recheck when a job is created, and at once when it ends', async () => {
    const notifier = createCallbackNotifier({ outbox, wake: deps.wake!, clock });
    const job = makeJob({ tenant: 'acme', status: 'QUEUED', version: 1, callbackUrl: url });
    notifier.noticed(job);
    notifier.noticed({ ...job, version: 2, status: 'RUNNING' });
    notifier.noticed(makeJob({ status: 'SUCCEEDED' })); // no callback: nothing
    await notifier.flush();
    expect(woken).toEqual([{ jobId: job.id, dueAt: T0 + 15 * 60_000 }]);
    clock.advance(1_000);
    notifier.noticed({ ...job, version: 3, status: 'SUCCEEDED', finishedAt: clock.now() });
    await notifier.flush();
    expect(woken[1]).toEqual({ jobId: job.id, dueAt: T0 + 1_000 });
    expect(await outbox.entryOf(job.id)).toEqual({ jobId: job.id, dueAt: T0 + 1_000 });
  });
});

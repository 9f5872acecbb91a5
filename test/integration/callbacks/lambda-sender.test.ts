// The aws sender's logic (shared/runtime/lambda/callback-sender.ts) and the notifier the functions
// that commit jobs use (shared/callbacks/notifier.ts), over the real SQLite outbox and job store and
// a real receiver on 127.0.0.1; the wake-ups they send are recorded (the SQS side is the e2e suite's).
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lambdaContext, sqsRecord } from '../../../scripts/lambda/lambda-events';
import { type LocalDatabase, openLocalDatabase } from '../../../shared/backends/local/database';
import {
  LocalCallbackSecrets,
  SqliteCallbackOutbox,
} from '../../../shared/backends/local/sqlite-callback-outbox';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import { createCallbackNotifier } from '../../../shared/callbacks/notifier';
import type { CallbackSenderDeps } from '../../../shared/callbacks/sender';
import type { CallbackOutboxEntry } from '../../../shared/engine/callback-ports';
import { createCallbackSenderHandler } from '../../../shared/runtime/lambda/callback-sender';
import { createObservability } from '../../../shared/runtime/lambda/observability';
import { ManualClock } from '../../../shared/runtime/time';
import { makeJob, T0 } from '../../support/factories';
import { type CountingReceiver, startCountingReceiver } from './counting-receiver';

const secret = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;
const event = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) =>
    sqsRecord(
      { messageId: `m${i}`, receiptHandle: `r${i}`, body, receiveCount: 1, sentAt: T0 },
      'arn:aws:sqs:us-east-1:0:cb',
    ),
  ),
});

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

  it('delivers the due entries a batch names, wakes again for one not yet due, drops what is not a wake-up', async () => {
    const due = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    const later = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    for (const job of [due, later]) await store.create(job);
    await outbox.add(due.id, T0);
    await outbox.add(later.id, T0 + 2 * 3_600_000);
    const answer = await handler().handle(
      event(
        JSON.stringify({ jobId: due.id, dueAt: T0 }),
        JSON.stringify({ jobId: later.id, dueAt: T0 }),
        JSON.stringify({ jobId: 'gone', dueAt: T0 }),
        'not json',
        JSON.stringify({ job: 'x' }),
      ),
      lambdaContext('opflow-callbacks', 70_000),
    );
    expect(answer.batchItemFailures).toEqual([]);
    expect(answer.result).toMatchObject({ attempted: 1, delivered: 1 });
    expect(receiver.received()).toBe(1);
    // Not due for two hours: woken again for its time (SQS delays it 900 s; it comes back in hops).
    expect(woken).toEqual([{ jobId: later.id, dueAt: T0 + 2 * 3_600_000 }]);
  });

  it('reports the records of a job it could not handle, so that SQS brings them back', async () => {
    const job = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: T0, callbackUrl: url });
    await store.create(job);
    await outbox.add(job.id, T0);
    const failing = Object.create(store) as SqliteJobStore;
    failing.get = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    const answer = await handler({ store: failing }).handle(
      event(JSON.stringify({ jobId: job.id, dueAt: T0 }), JSON.stringify({ jobId: job.id, dueAt: T0 })),
      lambdaContext('opflow-callbacks', 70_000),
    );
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }]);
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

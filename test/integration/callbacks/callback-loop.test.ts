// The local callback loop (shared/runtime/local/callback-loop.ts) over the real SQLite outbox and job
// store, with a real receiver on 127.0.0.1 and real timers: idle, it does not look at the outbox at
// all; it wakes for a job's end and at the earliest entry's due time.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalDatabase, openLocalDatabase } from '../../../shared/backends/local/database';
import {
  LocalCallbackSecrets,
  SqliteCallbackOutbox,
} from '../../../shared/backends/local/sqlite-callback-outbox';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import type { CallbackOutbox } from '../../../shared/engine/callback-ports';
import type { Job } from '../../../shared/engine/job-record';
import {
  type CallbackLoop,
  localReportLinks,
  startCallbackLoop,
} from '../../../shared/runtime/local/callback-loop';
import { makeJob } from '../../support/factories';
import { type CountingReceiver, startCountingReceiver } from './counting-receiver';

const secret = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('local callback loop', () => {
  let receiver: CountingReceiver;
  let url: string;
  let db: LocalDatabase;
  let store: SqliteJobStore;
  let reads: number;
  let outbox: CallbackOutbox;
  let loop: CallbackLoop | undefined;

  beforeEach(async () => {
    receiver = await startCountingReceiver();
    url = receiver.url;
    db = openLocalDatabase(':memory:');
    store = new SqliteJobStore(db);
    const real = new SqliteCallbackOutbox(db);
    reads = 0;
    // Counts every look at the outbox: a loop that polls shows here.
    outbox = {
      add: (jobId, dueAt) => real.add(jobId, dueAt),
      move: (entry, dueAt) => real.move(entry, dueAt),
      remove: (entry) => real.remove(entry),
      due: (now, limit) => {
        reads += 1;
        return real.due(now, limit);
      },
      earliest: () => {
        reads += 1;
        return real.earliest();
      },
      entryOf: (jobId) => real.entryOf(jobId),
    };
  });
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    receiver.server.close();
    db.close();
  });

  const start = () =>
    startCallbackLoop({
      store,
      outbox,
      secrets: new LocalCallbackSecrets(db, { OPFLOW_CALLBACK_SECRET: secret }),
      clock: { now: () => Date.now() },
      send: { policy: { allowHosts: [new URL(url).host] } },
    });
  const until = async (check: () => boolean | Promise<boolean>) => {
    while (!(await check())) await sleep(20);
  };
  const delivered = async (job: Job) => (await store.get(job.id))?.callback?.state === 'delivered';
  const finished = async (): Promise<Job> => {
    const job = makeJob({ tenant: 'acme', status: 'SUCCEEDED', finishedAt: Date.now(), callbackUrl: url });
    await store.create(job);
    return job;
  };

  it('idle, it does not look at the outbox; a job that ends is delivered at once', async () => {
    loop = start();
    await sleep(200);
    const afterStart = reads;
    await sleep(2_500);
    // No pass at all while nothing is due (the loop it replaces looked every second).
    expect(reads).toBe(afterStart);
    const job = await finished();
    loop.noticed(job);
    await until(() => delivered(job));
    expect(receiver.received()).toBe(1);
  });

  it('sleeps until the earliest entry comes due, then delivers it', async () => {
    loop = start();
    const job = await finished();
    const dueAt = Date.now() + 1_500;
    await outbox.add(job.id, dueAt);
    loop.wake();
    await sleep(500);
    expect(receiver.received()).toBe(0);
    await until(() => delivered(job));
    expect(receiver.received()).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(dueAt);
    const readsWhenDelivered = reads;
    await sleep(1_500);
    // Delivered, the outbox empty: asleep again.
    expect(reads).toBeLessThanOrEqual(readsWhenDelivered + 2);
    expect(await outbox.earliest()).toBeUndefined();
  });
});

describe('localReportLinks', () => {
  it('links to the job API at OPFLOW_PUBLIC_URL, none without it, and refuses a bad URL naming the variable', async () => {
    expect(localReportLinks({})).toBeUndefined();
    const links = localReportLinks({ OPFLOW_PUBLIC_URL: 'https://opflow.example.com/base/' });
    expect(
      await links?.link('j1', { key: 'reports/j1/attachments/a b.pdf', name: 'attachments/a b.pdf' }),
    ).toBe('https://opflow.example.com/base/jobs/j1/report/attachments/a%20b.pdf');
    expect(() => localReportLinks({ OPFLOW_PUBLIC_URL: 'file:///tmp' })).toThrow(
      /^OPFLOW_PUBLIC_URL: must be/,
    );
    expect(() => localReportLinks({ OPFLOW_PUBLIC_URL: 'https://u:p@x.example' })).toThrow(
      /OPFLOW_PUBLIC_URL/,
    );
  });
});

/**
 * The live feed's order and resume over the real change log: two connections to one SQLite file
 * stand for two opflow processes (one writes, the other serves the feed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../../shared/backends/local/database';
import { SqliteChangeLog } from '../../../shared/backends/local/sqlite-change-log';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import { SqlitePartialAnswers } from '../../../shared/backends/local/sqlite-partial-answers';
import { followChanges } from '../../../shared/engine/change-feed';
import type { Job } from '../../../shared/engine/job-record';
import { createEventsHub, type EventsHub, type FeedEvent } from '../../../shared/http/events-hub';
import { makeJob, T0 } from '../../support/factories';

let folder: string;
let writerDb: ReturnType<typeof openLocalDatabase>;
let readerDb: ReturnType<typeof openLocalDatabase>;
let writer: SqliteJobStore;
let log: SqliteChangeLog;
let hub: EventsHub | undefined;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'opflow-events-'));
  readerDb = openLocalDatabase(join(folder, 'opflow.db'));
  writerDb = openLocalDatabase(join(folder, 'opflow.db'));
  log = new SqliteChangeLog(readerDb, { now: () => T0 });
  writer = new SqliteJobStore(writerDb);
});

afterEach(async () => {
  await hub?.close();
  hub = undefined;
  writerDb.close();
  readerDb.close();
  rmSync(folder, { recursive: true, force: true });
});

async function advance(job: Job, changes: Partial<Job>): Promise<Job> {
  const next = { ...job, ...changes, version: job.version + 1, updatedAt: job.updatedAt + 1 };
  expect(await writer.commit(next, job.version)).toBe(true);
  return next;
}

/** A listener that keeps what it is sent. */
function collector(filter = {}) {
  const events: FeedEvent[] = [];
  return { events, subscription: { filter, send: (event: FeedEvent) => events.push(event) > 0, end() {} } };
}

async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 5_000) throw new Error('the events did not arrive');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const newHub = () =>
  createEventsHub({ feed: log, batchView: async () => undefined, pollMs: 10, pageSize: 3 });

describe('the change log', () => {
  it("numbers another connection's commits in commit order, leaving out writes that keep the version", async () => {
    const job = makeJob();
    await writer.create(job);
    const running = await advance(job, { status: 'RUNNING' });
    writerDb.prepare('UPDATE jobs SET workflow = workflow WHERE id = ?').run(job.id);
    await advance(running, { step: 'poll' });
    const changes = await log.after(0, 10);
    expect(
      changes.map((change) => [change.version, change.status, change.step, change.previousStatus]),
    ).toEqual([
      [1, 'QUEUED', 'submit', undefined],
      [2, 'RUNNING', 'submit', 'QUEUED'],
      [3, 'RUNNING', 'poll', 'RUNNING'],
    ]);
    expect(changes.map((change) => change.seq)).toEqual([1, 2, 3]);
    expect(await log.head()).toBe(3);
  });

  it('prunes changes older than the retention from the front', async () => {
    let now = T0 + 10_000;
    const pruning = new SqliteChangeLog(readerDb, { retentionMs: 1_000, now: () => now });
    const old = makeJob({ updatedAt: T0 });
    await writer.create(old);
    await writer.create(makeJob({ updatedAt: T0 + 9_500 }));
    expect(pruning.prune()).toBe(1);
    expect(await pruning.oldest()).toBe(2);
    now += 10_000;
    expect(pruning.prune()).toBe(1);
    expect(await pruning.oldest()).toBe(3);
  });
});

describe('the events hub', () => {
  it('sends every change in order with its number as id: job for a status, step within one', async () => {
    hub = newHub();
    const seen = collector();
    await hub.subscribe(seen.subscription);
    const job = makeJob();
    await writer.create(job);
    let current = await advance(job, { status: 'RUNNING' });
    for (let poll = 1; poll <= 5; poll += 1) current = await advance(current, { polls: poll });
    await advance(current, { status: 'SUCCEEDED' });
    await until(() => seen.events.length === 8);
    expect(seen.events.map((event) => event.type)).toEqual([
      'job',
      'job',
      'step',
      'step',
      'step',
      'step',
      'step',
      'job',
    ]);
    expect(seen.events.map((event) => event.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(hub.delivered).toBe(8);
  });

  it('resumes after Last-Event-ID with nothing lost or repeated', async () => {
    const job = makeJob();
    await writer.create(job);
    let current = job;
    for (let step = 0; step < 6; step += 1) current = await advance(current, { polls: step + 1 });
    hub = newHub();
    const resumed = collector();
    await hub.subscribe(resumed.subscription, 2);
    await until(() => resumed.events.length === 5);
    await advance(current, { status: 'CANCELLED' });
    await until(() => resumed.events.length === 6);
    expect(resumed.events.map((event) => event.id)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('sends a reset to a listener resuming from before the changes kept', async () => {
    const first = makeJob({ updatedAt: T0 });
    await writer.create(first);
    await writer.create(makeJob({ updatedAt: T0 + 5_000 }));
    new SqliteChangeLog(readerDb, { retentionMs: 1_000, now: () => T0 + 5_500 }).prune();
    hub = newHub();
    const late = collector();
    await hub.subscribe(late.subscription, 0);
    expect(late.events).toEqual([{ type: 'reset', id: 2, data: { after: 0, oldest: 2 } }]);
  });

  it("gives each listener only its tenant's, batch's or job's changes", async () => {
    hub = newHub();
    const acme = collector({ tenant: 'acme' });
    const batch = collector({ batchId: 'b1' });
    const one = collector({ jobId: 'job-2' });
    for (const listener of [acme, batch, one]) await hub.subscribe(listener.subscription);
    await writer.create(makeJob({ id: 'job-1', tenant: 'acme', batchId: 'b1' }));
    await writer.create(makeJob({ id: 'job-2', tenant: 'other', batchId: 'b1' }));
    await writer.create(makeJob({ id: 'job-3', tenant: 'acme' }));
    await until(() => acme.events.length === 2 && batch.events.length === 2 && one.events.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const ids = (events: FeedEvent[]) => events.map((event) => (event.data as { job: Job }).job.id);
    expect(ids(acme.events)).toEqual(['job-1', 'job-3']);
    expect(ids(batch.events)).toEqual(['job-1', 'job-2']);
    expect(ids(one.events)).toEqual(['job-2']);
  });

  it("sends a streamed answer's parts to its job's and tenant's listeners, and the text so far to a new listener of the job", async () => {
    const answers = new SqlitePartialAnswers(writerDb, { now: () => T0 });
    hub = createEventsHub({
      feed: log,
      batchView: async () => undefined,
      partialAnswer: (jobId) => answers.read(jobId),
      pollMs: 10,
    });
    const job = makeJob({ id: 'job-a', tenant: 'acme', batchId: 'b1' });
    await writer.create(job);
    const part = { jobId: 'job-a', tenant: 'acme', batchId: 'b1', workflow: 'llm-chat', step: 'answer-ai50' };
    const first = { ...part, status: 'RUNNING', version: 1, at: T0 };
    await answers.publish({ ...first, text: 'Separators ', offset: 0 });
    const early = collector({ jobId: 'job-a' });
    const other = collector({ tenant: 'other' });
    const batch = collector({ batchId: 'b1' });
    for (const listener of [early, other, batch]) await hub.subscribe(listener.subscription);
    await answers.publish({ ...first, text: 'Separators crack.', offset: 11, at: T0 + 250 });
    await advance(job, { status: 'SUCCEEDED' });
    await until(() => early.events.length === 3 && batch.events.length === 2);
    const answersOf = (events: FeedEvent[]) =>
      events
        .filter((event) => event.type === 'answer')
        .map((event) => [event.id, (event.data as { answer: { offset: number; text: string } }).answer]);
    // The text so far first (no id: no place in the feed), then each part after it.
    expect(answersOf(early.events)).toEqual([
      [
        undefined,
        { step: 'answer-ai50', offset: 0, text: 'Separators ', length: 11, at: new Date(T0).toISOString() },
      ],
      [
        3,
        { step: 'answer-ai50', offset: 11, text: 'crack.', length: 17, at: new Date(T0 + 250).toISOString() },
      ],
    ]);
    expect(early.events.at(-1)?.type).toBe('job');
    expect(answersOf(batch.events)).toHaveLength(1);
    expect(other.events).toEqual([]);
    // Resuming after an id gets the parts after it, no text so far.
    const resumed = collector({ jobId: 'job-a' });
    await hub.subscribe(resumed.subscription, 2);
    await until(() => resumed.events.length === 2);
    expect(resumed.events.map((event) => [event.type, event.id])).toEqual([
      ['answer', 3],
      ['job', 4],
    ]);
  });

  it('holds back a listener whose connection has not drained, and sends it everything once it has', async () => {
    hub = newHub();
    const fast = collector();
    const slow = collector();
    let drained = false;
    await hub.subscribe(fast.subscription);
    await hub.subscribe({ ...slow.subscription, ready: () => drained });
    for (let n = 0; n < 5; n += 1) await writer.create(makeJob());
    await until(() => fast.events.length === 5);
    expect(slow.events).toEqual([]);
    drained = true;
    hub.wake();
    await until(() => slow.events.length === 5);
    expect(slow.events.map((event) => event.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('drops a listener that cannot keep up, and reads on for the others', async () => {
    hub = newHub();
    const kept = collector();
    await hub.subscribe(kept.subscription);
    await hub.subscribe({ filter: {}, send: () => false, end() {} });
    expect(hub.listeners).toBe(2);
    await writer.create(makeJob());
    await writer.create(makeJob());
    await until(() => kept.events.length === 2);
    expect(hub.listeners).toBe(1);
  });
});

describe('followChanges (opflow batch --watch)', () => {
  it("is woken by another process's changes to the batch's jobs, not by other batches' jobs", async () => {
    await writer.create(makeJob({ batchId: 'b1' }));
    let woken = 0;
    const stop = followChanges(log, { batchId: 'b1' }, () => woken++, 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(woken).toBe(0);
    await writer.create(makeJob({ batchId: 'b2' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(woken).toBe(0);
    await writer.create(makeJob({ batchId: 'b1' }));
    await until(() => woken === 1);
    stop();
    await writer.create(makeJob({ batchId: 'b1' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(woken).toBe(1);
  });
});

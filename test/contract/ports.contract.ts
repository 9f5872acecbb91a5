/**
 * The port contract suite: what every backend's JobStore, WorkQueue, ReportStore and RateLimiter
 * promise (shared/engine/ports.ts), and nothing more. test/contract/local.contract.test.ts runs it
 * against the local backend; the aws backend runs the same functions against its adapters.
 *
 * Each `describe...Contract(name, factory)` calls `factory` once per test: it must return a fresh,
 * empty subject and may return `dispose` to clean up after the test.
 */

import { ulid } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobStatus } from '../../shared/engine/job-record';
import type { JobStore, RateLimiter, ReportStore, WorkMessage, WorkQueue } from '../../shared/engine/ports';
import { writeJobReport } from '../../shared/reports/write-job-report';
import { workflows } from '../../shared/workflows';
import { makeJob, T0 } from '../support/factories';
import { pngImage } from '../support/images';

export interface ContractFixture<T> {
  subject: T;
  dispose?: (() => Promise<void> | void) | undefined;
}

export type ContractFactory<T, Options = void> = (options: Options) => Promise<ContractFixture<T>>;

/** A valid job in status QUEUED (test/support/factories.ts), kept under the name the suites use. */
export const contractJob = makeJob;

/** The same job, one committed write later. */
function nextVersion(job: Job, changes: Partial<Job> = {}): Job {
  return { ...job, ...changes, version: job.version + 1, updatedAt: job.updatedAt + 1 };
}

/** Runs `body` with a fresh subject from `factory` and disposes of it afterwards. */
function useFixture<T, O>(factory: ContractFactory<T, O>) {
  const disposers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const dispose of disposers.splice(0)) await dispose();
  });
  return async (options: O): Promise<T> => {
    const fixture = await factory(options);
    if (fixture.dispose) disposers.push(fixture.dispose);
    return fixture.subject;
  };
}

async function collectAll(store: JobStore, query: Parameters<JobStore['list']>[0]): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const result = await store.list({ ...query, cursor });
    jobs.push(...result.jobs);
    cursor = result.cursor;
    if (cursor === undefined) return jobs;
  }
  throw new Error('list never stopped handing out cursors');
}

const ids = (jobs: Job[]) => jobs.map((job) => job.id).sort();

export function describeJobStoreContract(name: string, factory: ContractFactory<JobStore>): void {
  describe(`JobStore contract: ${name}`, () => {
    const fresh = useFixture(factory);

    describe('create and get', () => {
      it('returns the job as it was created, every field intact', async () => {
        const store = await fresh();
        const job = contractJob({
          label: 'disclosure “hinge”.md',
          context: { task_id: 'T-1', nested: { list: [1, 'two', null], flag: true }, unicode: '折叠铰链' },
          pending: {
            step: 'confirm-features',
            nextStep: 'search-elements',
            prompt: 'Which features?',
            options: [{ id: 'f1', label: 'A hinge', preselected: true, detail: 'two axes' }],
            min: 1,
            max: 5,
            offeredAt: T0,
          },
          lastError: {
            step: 'submit',
            operationId: 'ai35-1',
            kind: 'throttled',
            code: 67200002,
            message: 'slow down',
            retryable: true,
            httpStatus: 200,
            correlationId: 'c-1',
            at: T0,
          },
          intents: { submit: 2 },
          selections: { 'confirm-summary': ['s1', 's2'] },
          outputs: ['reports/x/result.json'],
          batchId: 'batch-1',
          idempotencyKey: 'idem-1',
          callbackUrl: 'https://example.test/hook',
          input: { ref: 'inputs/x/input.json' },
        });
        const result = await store.create(job);
        expect(result).toEqual({ job, created: true });
        expect(await store.get(job.id)).toEqual(job);
      });

      it('returns undefined for a job that does not exist', async () => {
        const store = await fresh();
        expect(await store.get(ulid())).toBeUndefined();
      });

      it('keeps jobs apart', async () => {
        const store = await fresh();
        const a = contractJob({ label: 'a' });
        const b = contractJob({ label: 'b' });
        await store.create(a);
        await store.create(b);
        expect((await store.get(a.id))?.label).toBe('a');
        expect((await store.get(b.id))?.label).toBe('b');
      });
    });

    describe('idempotency keys', () => {
      it('returns the existing job for a second create with the same tenant and key', async () => {
        const store = await fresh();
        const first = contractJob({ idempotencyKey: 'order-42', label: 'first' });
        const second = contractJob({ idempotencyKey: 'order-42', label: 'second' });
        expect((await store.create(first)).created).toBe(true);
        const again = await store.create(second);
        expect(again.created).toBe(false);
        expect(again.job).toEqual(first);
        expect(await store.get(second.id)).toBeUndefined();
      });

      it('treats the same key of two tenants as two jobs', async () => {
        const store = await fresh();
        const a = contractJob({ tenant: 'acme', idempotencyKey: 'k' });
        const b = contractJob({ tenant: 'globex', idempotencyKey: 'k' });
        expect((await store.create(a)).created).toBe(true);
        expect((await store.create(b)).created).toBe(true);
        expect((await store.findByIdempotencyKey('acme', 'k'))?.id).toBe(a.id);
        expect((await store.findByIdempotencyKey('globex', 'k'))?.id).toBe(b.id);
      });

      it('creates exactly one job when the same key is created concurrently', async () => {
        const store = await fresh();
        const jobs = Array.from({ length: 5 }, (_, i) =>
          contractJob({ idempotencyKey: 'race', label: `${i}` }),
        );
        const results = await Promise.all(jobs.map((job) => store.create(job)));
        expect(results.filter((result) => result.created)).toHaveLength(1);
        const winner = results.find((result) => result.created)!.job;
        for (const result of results) expect(result.job.id).toBe(winner.id);
      });

      it('finds nothing for an unknown key', async () => {
        const store = await fresh();
        await store.create(contractJob({ idempotencyKey: 'known' }));
        expect(await store.findByIdempotencyKey('default', 'unknown')).toBeUndefined();
        expect(await store.findByIdempotencyKey('other-tenant', 'known')).toBeUndefined();
      });

      it('allows any number of jobs without a key', async () => {
        const store = await fresh();
        const results = await Promise.all([store.create(contractJob()), store.create(contractJob())]);
        expect(results.every((result) => result.created)).toBe(true);
      });
    });

    describe('commit', () => {
      it('writes the job when the stored version is the expected one', async () => {
        const store = await fresh();
        const job = contractJob();
        await store.create(job);
        const running = nextVersion(job, { status: 'RUNNING', step: 'summary', context: { task_id: 't' } });
        expect(await store.commit(running, job.version)).toBe(true);
        expect(await store.get(job.id)).toEqual(running);
      });

      it('refuses a stale write and leaves the stored job alone', async () => {
        const store = await fresh();
        const job = contractJob();
        await store.create(job);
        const winner = nextVersion(job, { step: 'winner' });
        expect(await store.commit(winner, job.version)).toBe(true);
        const loser = nextVersion(job, { step: 'loser' });
        expect(await store.commit(loser, job.version)).toBe(false);
        expect(await store.get(job.id)).toEqual(winner);
      });

      it('lets exactly one of several concurrent writers from the same version win', async () => {
        const store = await fresh();
        const job = contractJob();
        await store.create(job);
        const writes = Array.from({ length: 6 }, (_, i) => nextVersion(job, { step: `writer-${i}` }));
        const outcomes = await Promise.all(writes.map((write) => store.commit(write, job.version)));
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        const stored = await store.get(job.id);
        expect(stored?.step).toBe(writes[outcomes.indexOf(true)]?.step);
        expect(stored?.version).toBe(job.version + 1);
      });

      it('refuses a write to a job that does not exist', async () => {
        const store = await fresh();
        const ghost = contractJob({ version: 2 });
        expect(await store.commit(ghost, 1)).toBe(false);
        expect(await store.get(ghost.id)).toBeUndefined();
      });

      it("keeps the job's message count (the runaway guard's) through commits, to the failure it ends in", async () => {
        const store = await fresh();
        let job = contractJob();
        await store.create(job);
        for (let sent = 1; sent <= 3; sent += 1) {
          const next = nextVersion(job, { messages: sent, nextRunAt: job.nextRunAt + 1_000 });
          expect(await store.commit(next, job.version)).toBe(true);
          job = next;
        }
        expect((await store.get(job.id))?.messages).toBe(3);
        const stopped = nextVersion(job, {
          status: 'FAILED',
          lastError: { step: job.step, kind: 'message-budget', message: 'over', retryable: false, at: T0 },
          finishedAt: T0,
        });
        expect(await store.commit(stopped, job.version)).toBe(true);
        expect(await store.get(job.id)).toEqual(stopped);
        expect((await store.listDue(Number.MAX_SAFE_INTEGER, 10)).map((due) => due.id)).not.toContain(job.id);
      });

      it('chains commits version after version', async () => {
        const store = await fresh();
        let job = contractJob();
        await store.create(job);
        for (let i = 0; i < 5; i += 1) {
          const next = nextVersion(job, { polls: i + 1 });
          expect(await store.commit(next, job.version)).toBe(true);
          job = next;
        }
        expect(await store.get(job.id)).toEqual(job);
        expect(job.version).toBe(6);
      });
    });

    describe('listDue', () => {
      it('returns schedulable jobs due at or before now, oldest first', async () => {
        const store = await fresh();
        const late = contractJob({ status: 'WAITING', nextRunAt: T0 + 3_000 });
        const early = contractJob({ status: 'QUEUED', nextRunAt: T0 + 1_000 });
        const middle = contractJob({ status: 'RUNNING', nextRunAt: T0 + 2_000 });
        const future = contractJob({ status: 'QUEUED', nextRunAt: T0 + 10_000 });
        for (const job of [late, early, middle, future]) await store.create(job);
        const due = await store.listDue(T0 + 3_000, 10);
        expect(due.map((job) => job.id)).toEqual([early.id, middle.id, late.id]);
        expect(due[0]).toEqual(early);
      });

      it('leaves out finished jobs, whatever their nextRunAt', async () => {
        const store = await fresh();
        const statuses: JobStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
        for (const status of statuses) await store.create(contractJob({ status, nextRunAt: T0 }));
        const queued = contractJob({ status: 'QUEUED', nextRunAt: T0 });
        await store.create(queued);
        expect((await store.listDue(T0 + 60_000, 10)).map((job) => job.id)).toEqual([queued.id]);
      });

      it('includes a job waiting for a person once its nextRunAt (its deadline) has come', async () => {
        const store = await fresh();
        const job = contractJob({ status: 'AWAITING_INPUT', nextRunAt: T0 + 1_000 });
        await store.create(job);
        expect(await store.listDue(T0, 10)).toEqual([]);
        expect((await store.listDue(T0 + 1_000, 10)).map((due) => due.id)).toEqual([job.id]);
      });

      it('honours the limit, keeping the oldest', async () => {
        const store = await fresh();
        const jobs = Array.from({ length: 5 }, (_, i) => contractJob({ nextRunAt: T0 + i * 100 }));
        for (const job of jobs) await store.create(job);
        const due = await store.listDue(T0 + 1_000, 2);
        expect(due.map((job) => job.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
      });

      it('follows commits: a rescheduled job moves, a finished one leaves', async () => {
        const store = await fresh();
        const a = contractJob({ nextRunAt: T0 });
        const b = contractJob({ nextRunAt: T0 });
        await store.create(a);
        await store.create(b);
        await store.commit(nextVersion(a, { status: 'WAITING', nextRunAt: T0 + 5_000 }), a.version);
        await store.commit(nextVersion(b, { status: 'SUCCEEDED', finishedAt: T0 + 1 }), b.version);
        expect(await store.listDue(T0 + 1_000, 10)).toEqual([]);
        const due = await store.listDue(T0 + 5_000, 10);
        expect(due.map((job) => job.id)).toEqual([a.id]);
        expect(due[0]?.version).toBe(a.version + 1);
      });

      it('brings a job back when a person answers and it is due again', async () => {
        const store = await fresh();
        const job = contractJob({ status: 'AWAITING_INPUT', nextRunAt: T0 + 60_000 });
        await store.create(job);
        expect(await store.listDue(T0 + 10, 10)).toEqual([]);
        await store.commit(nextVersion(job, { status: 'QUEUED', nextRunAt: T0 + 10 }), job.version);
        expect((await store.listDue(T0 + 10, 10)).map((due) => due.id)).toEqual([job.id]);
      });
    });

    describe('listWrittenAhead', () => {
      // The store finds the candidates; which the sweeper sends is one rule for every store
      // (engine/sweep.ts's sentWhenWrittenAhead): a store that left out a call in flight would
      // strand a frozen skewed caller's job for as long as its clock is ahead.
      it('finds the unfinished jobs created and last written by a clock ahead, a paid call in flight included', async () => {
        const store = await fresh();
        expect(store.listWrittenAhead).toBeDefined();
        const ahead = T0 + 2 * 3_600_000;
        const at = {
          createdAt: ahead,
          updatedAt: ahead,
          nextRunAt: ahead + 1_000,
          deadlineAt: ahead + 3_600_000,
        };
        const queued = contractJob(at);
        const calling = contractJob({
          ...at,
          status: 'RUNNING',
          inFlightSince: ahead,
          inFlightBy: 'host/1/a',
          nextRunAt: ahead + 60_000,
        });
        const finished = contractJob({ ...at, status: 'SUCCEEDED', finishedAt: ahead });
        const onTime = contractJob({ nextRunAt: T0 + 1_000 });
        // Created ahead, then written on time (a worker re-based it): no longer ahead.
        const rebased = contractJob(at);
        for (const job of [queued, calling, finished, onTime, rebased]) await store.create(job);
        const onThisClock = {
          ...rebased,
          version: rebased.version + 1,
          updatedAt: T0,
          nextRunAt: T0 + 1_000,
        };
        expect(await store.commit(onThisClock, rebased.version)).toBe(true);

        const found = (await store.listWrittenAhead!(T0, 10)).map((job) => job.id).sort();
        expect(found).toEqual([queued.id, calling.id].sort());
        // Within the tolerance of a clock kept by NTP, nothing is ahead.
        expect(await store.listWrittenAhead!(ahead - 1_000, 10)).toEqual([]);
      });
    });

    describe('list', () => {
      it('filters by status, batch and tenant, and follows status changes', async () => {
        const store = await fresh();
        const queued = contractJob({ status: 'QUEUED', batchId: 'b1' });
        const waiting = contractJob({ status: 'WAITING', batchId: 'b1', tenant: 'acme' });
        const done = contractJob({ status: 'SUCCEEDED', batchId: 'b2', tenant: 'acme' });
        for (const job of [queued, waiting, done]) await store.create(job);

        expect(ids(await collectAll(store, {}))).toEqual(ids([queued, waiting, done]));
        expect(ids(await collectAll(store, { status: 'QUEUED' }))).toEqual([queued.id]);
        expect(ids(await collectAll(store, { batchId: 'b1' }))).toEqual(ids([queued, waiting]));
        expect(ids(await collectAll(store, { tenant: 'acme' }))).toEqual(ids([waiting, done]));
        expect(ids(await collectAll(store, { tenant: 'acme', status: 'SUCCEEDED' }))).toEqual([done.id]);
        expect(await collectAll(store, { status: 'FAILED' })).toEqual([]);

        await store.commit(nextVersion(queued, { status: 'FAILED' }), queued.version);
        expect(await collectAll(store, { status: 'QUEUED' })).toEqual([]);
        const failed = await collectAll(store, { status: 'FAILED' });
        expect(failed.map((job) => [job.id, job.version])).toEqual([[queued.id, queued.version + 1]]);
      });

      it('pages through every job exactly once with the cursor', async () => {
        const store = await fresh();
        const jobs = Array.from({ length: 7 }, () => contractJob({ batchId: 'paged' }));
        for (const job of jobs) await store.create(job);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.list({ batchId: 'paged', limit: 3, cursor });
          expect(page.jobs.length).toBeLessThanOrEqual(3);
          seen.push(...page.jobs.map((job) => job.id));
          cursor = page.cursor;
          pages += 1;
        } while (cursor !== undefined && pages < 20);
        expect(seen.sort()).toEqual(ids(jobs));
        expect(pages).toBeGreaterThanOrEqual(3);
      });

      it('returns whole jobs', async () => {
        const store = await fresh();
        const job = contractJob({ status: 'WAITING', context: { task_id: 'abc' }, label: 'x.md' });
        await store.create(job);
        expect((await store.list({ status: 'WAITING' })).jobs).toEqual([job]);
      });
    });
  });
}

export interface QueueContractSubject {
  queue: WorkQueue;
  /**
   * Everything the queue would deliver to a consumer right now (waiting briefly where delivery is
   * remote), removing it from the queue.
   */
  drain(): Promise<WorkMessage[]>;
}

export function describeWorkQueueContract(
  name: string,
  factory: ContractFactory<QueueContractSubject>,
): void {
  describe(`WorkQueue contract: ${name}`, () => {
    const fresh = useFixture(factory);
    const byJob = (messages: WorkMessage[]) => [...messages].sort((a, b) => a.jobId.localeCompare(b.jobId));

    it('delivers a message sent without delay, exactly as sent', async () => {
      const { queue, drain } = await fresh();
      const message = { jobId: ulid(), version: 7 };
      await queue.send(message, 0);
      expect(await drain()).toEqual([message]);
    });

    it('holds a delayed message back', async () => {
      const { queue, drain } = await fresh();
      const now = { jobId: ulid(), version: 1 };
      const later = { jobId: ulid(), version: 1 };
      await queue.send(later, Math.min(queue.maxDelayMs, 600_000));
      await queue.send(now, 0);
      expect(await drain()).toEqual([now]);
    });

    it('accepts a delay longer than it can hold', async () => {
      const { queue } = await fresh();
      expect(queue.maxDelayMs).toBeGreaterThan(0);
      await expect(queue.send({ jobId: ulid(), version: 1 }, queue.maxDelayMs * 10)).resolves.toBeUndefined();
    });

    it('delivers every message of a batch', async () => {
      const { queue, drain } = await fresh();
      if (!queue.sendBatch) return;
      const messages = Array.from({ length: 12 }, (_, i) => ({ jobId: ulid(), version: i + 1 }));
      await queue.sendBatch(messages.map((message) => ({ message, delayMs: 0 })));
      expect(byJob(await drain())).toEqual(byJob(messages));
    });

    it('keeps two messages for the same job apart', async () => {
      const { queue, drain } = await fresh();
      const jobId = ulid();
      await queue.send({ jobId, version: 1 }, 0);
      await queue.send({ jobId, version: 2 }, 0);
      const versions = (await drain()).map((message) => message.version).sort();
      expect(versions).toEqual([1, 2]);
    });
  });
}

export interface ReportStoreContractSubject {
  reports: ReportStore;
  /** Reads what a `link()` points at (a file path, a URL), to prove the link leads to the object. */
  readLink(link: string): Promise<Uint8Array>;
}

export function describeReportStoreContract(
  name: string,
  factory: ContractFactory<ReportStoreContractSubject>,
): void {
  describe(`ReportStore contract: ${name}`, () => {
    const fresh = useFixture(factory);
    const text = (body: Uint8Array | undefined) => (body ? Buffer.from(body).toString('utf8') : undefined);

    it('gives back the bytes and content type that were put', async () => {
      const { reports } = await fresh();
      const jobId = ulid();
      const bytes = new Uint8Array([0, 1, 2, 250, 255]);
      await reports.put(`reports/${jobId}/attachments/blob.bin`, bytes, 'application/x-custom');
      const stored = await reports.get(`reports/${jobId}/attachments/blob.bin`);
      expect(stored && Buffer.from(stored.body).equals(Buffer.from(bytes))).toBe(true);
      expect(stored?.contentType).toBe('application/x-custom');
    });

    it('stores strings as UTF-8 and keeps the declared type', async () => {
      const { reports } = await fresh();
      const key = `reports/${ulid()}/report.md`;
      await reports.put(key, '# Novelty — 新颖性\n', 'text/markdown; charset=utf-8');
      const stored = await reports.get(key);
      expect(text(stored?.body)).toBe('# Novelty — 新颖性\n');
      expect(stored?.contentType).toBe('text/markdown; charset=utf-8');
    });

    it('overwrites an object written twice under one key', async () => {
      const { reports } = await fresh();
      const key = `reports/${ulid()}/result.json`;
      await reports.put(key, '{"try":1}', 'application/json');
      await reports.put(key, '{"try":2}', 'text/plain');
      const stored = await reports.get(key);
      expect(text(stored?.body)).toBe('{"try":2}');
      expect(stored?.contentType).toBe('text/plain');
    });

    it('returns undefined for a key never written', async () => {
      const { reports } = await fresh();
      expect(await reports.get(`reports/${ulid()}/missing.json`)).toBeUndefined();
    });

    it('lists the keys under a prefix and nothing else', async () => {
      const { reports } = await fresh();
      const jobId = ulid();
      const other = ulid();
      const keys = [
        `reports/${jobId}/result.json`,
        `reports/${jobId}/report.html`,
        `reports/${jobId}/steps/ai35-1.json`,
        `reports/${jobId}/steps/ai35-2.json`,
      ];
      for (const key of keys) await reports.put(key, 'x', 'text/plain');
      await reports.put(`reports/${other}/result.json`, 'y', 'application/json');
      expect((await reports.list(`reports/${jobId}/`)).sort()).toEqual([...keys].sort());
      expect((await reports.list(`reports/${jobId}/steps/`)).sort()).toEqual(keys.slice(2).sort());
      expect(await reports.list(`reports/${jobId}/steps/ai35-2`)).toEqual([keys[3]]);
      expect(await reports.list(`reports/${ulid()}/`)).toEqual([]);
    });

    it("keeps the images a design search's result.json held as base64 as files beside it", async () => {
      const { reports, readLink } = await fresh();
      const jobId = ulid();
      const product = pngImage(24, 24, [30, 120, 200]);
      const drawing = pngImage(12, 12, [0, 0, 0]);
      const stepKey = `reports/${jobId}/steps/image-1-result.json`;
      const answer = {
        task_status: 2,
        line_drawing_base64: `data:image/png;base64,${drawing.toString('base64')}`,
      };
      await reports.put(stepKey, JSON.stringify(answer), 'application/json');
      const input = { images: [{ data: product.toString('base64'), name: 'front.png' }], countries: ['US'] };
      const job = contractJob({
        id: jobId,
        workflow: 'design-infringement-search',
        status: 'SUCCEEDED',
        step: 'result',
        input: { inline: input },
        outputs: [stepKey],
        finishedAt: T0 + 60_000,
      });
      const keys = await writeJobReport(reports, workflows.get('design-infringement-search')!, job, input);
      expect(keys).toEqual(
        expect.arrayContaining([`reports/${jobId}/images/1.png`, `reports/${jobId}/images/2.png`]),
      );
      const resultText = text((await reports.get(`reports/${jobId}/result.json`))?.body) ?? '';
      expect(resultText).not.toContain(product.toString('base64').slice(0, 40));
      expect(resultText).not.toContain(drawing.toString('base64').slice(0, 40));
      const result = JSON.parse(resultText);
      expect(result.input.images[0]).toEqual({ data: 'images/1.png', name: 'front.png' });
      expect(result.steps['image-1-result'].line_drawing_base64).toBe('images/2.png');
      expect(result.images).toEqual([
        {
          file: 'images/1.png',
          contentType: 'image/png',
          bytes: product.byteLength,
          at: ['input.images[0].data'],
        },
        {
          file: 'images/2.png',
          contentType: 'image/png',
          bytes: drawing.byteLength,
          at: ['steps.image-1-result.line_drawing_base64'],
        },
      ]);
      const stored = await reports.get(`reports/${jobId}/images/2.png`);
      expect(stored?.contentType).toBe('image/png');
      expect(stored && Buffer.from(stored.body).equals(drawing)).toBe(true);
      const link = await reports.link(`reports/${jobId}/images/1.png`, 600);
      expect(Buffer.from(await readLink(link)).equals(product)).toBe(true);
    });

    it('links to the object', async () => {
      const { reports, readLink } = await fresh();
      const key = `reports/${ulid()}/report.html`;
      await reports.put(key, '<h1>ok</h1>', 'text/html; charset=utf-8');
      const link = await reports.link(key, 600);
      expect(link).not.toBe('');
      expect(Buffer.from(await readLink(link)).toString('utf8')).toBe('<h1>ok</h1>');
    });
  });
}

export interface RateLimiterContractOptions {
  /** The bucket's configured calls per second. */
  ratePerSecond: number;
  /** The most tokens the bucket holds. */
  burst: number;
}

export function describeRateLimiterContract(
  name: string,
  factory: ContractFactory<RateLimiter, RateLimiterContractOptions>,
): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const fresh = useFixture(factory);

    /** Grants in [from, from + durationMs), taking as fast as allowed and jumping to each retry time. */
    async function grantsOver(limiter: RateLimiter, bucket: string, from: number, durationMs: number) {
      let now = from;
      let grants = 0;
      for (let guard = 0; now < from + durationMs && guard < 10_000; guard += 1) {
        const decision = await limiter.take(bucket, now);
        if (decision.granted) grants += 1;
        else {
          expect(decision.retryAtMs).toBeGreaterThan(now);
          now = decision.retryAtMs;
        }
      }
      return { grants, end: now };
    }

    it('grants a burst at once, then says when the next call may go', async () => {
      const limiter = await fresh({ ratePerSecond: 2, burst: 3 });
      const bucket = `key-${ulid()}`;
      for (let i = 0; i < 3; i += 1) expect(await limiter.take(bucket, T0)).toEqual({ granted: true });
      const refused = await limiter.take(bucket, T0);
      expect(refused.granted).toBe(false);
      if (refused.granted) return;
      expect(refused.retryAtMs).toBeGreaterThan(T0);
      expect(refused.retryAtMs).toBeLessThanOrEqual(T0 + 500);
      expect(await limiter.take(bucket, refused.retryAtMs)).toEqual({ granted: true });
    });

    it('holds the configured rate over time', async () => {
      const limiter = await fresh({ ratePerSecond: 4, burst: 1 });
      const { grants } = await grantsOver(limiter, `key-${ulid()}`, T0, 10_000);
      expect(grants).toBeGreaterThanOrEqual(39);
      expect(grants).toBeLessThanOrEqual(41);
    });

    it('keeps buckets apart', async () => {
      const limiter = await fresh({ ratePerSecond: 1, burst: 1 });
      const a = `key-${ulid()}`;
      const b = `key-${ulid()}`;
      expect(await limiter.take(a, T0)).toEqual({ granted: true });
      expect((await limiter.take(a, T0)).granted).toBe(false);
      expect(await limiter.take(b, T0)).toEqual({ granted: true });
    });

    it('slows down after throttling, and speeds up again slowly on success, up to the configured rate', async () => {
      const limiter = await fresh({ ratePerSecond: 4, burst: 1 });
      const bucket = `key-${ulid()}`;
      const before = await grantsOver(limiter, bucket, T0, 10_000);
      await limiter.throttled(bucket, before.end);
      const slowed = await grantsOver(limiter, bucket, before.end, 10_000);
      expect(slowed.grants).toBeLessThan(before.grants * 0.75);

      let now = slowed.end;
      for (let i = 0; i < 200; i += 1) {
        now += 10;
        await limiter.succeeded(bucket, now);
      }
      const recovered = await grantsOver(limiter, bucket, now + 1_000, 10_000);
      expect(recovered.grants).toBeGreaterThan(slowed.grants);
      expect(recovered.grants).toBeLessThanOrEqual(before.grants + 1);
    });

    it('counts the key as saturated only when a refused call waits longer than one token interval', async () => {
      const limiter = await fresh({ ratePerSecond: 5, burst: 1 });
      if (!limiter.saturated) return;
      const bucket = `key-${ulid()}`;
      expect(await limiter.take(bucket, T0)).toEqual({ granted: true });
      // One job's next call right after its last: it waits for the spacing alone (200 ms).
      const next = await limiter.take(bucket, T0, { reserveWithinMs: 5_000 });
      expect(next).toMatchObject({ granted: false, retryAtMs: T0 + 200, reserved: true });
      expect(await limiter.saturated(bucket, T0)).toBe(false);
      // Another call in the same instant waits behind it: a line longer than the call itself.
      const behind = await limiter.take(bucket, T0, { reserveWithinMs: 5_000 });
      expect(behind).toMatchObject({ granted: false, retryAtMs: T0 + 400, reserved: true });
      expect(await limiter.saturated(bucket, T0)).toBe(true);
      expect(await limiter.saturated(bucket, T0 + 10_000)).toBe(false);
    });

    it('never speeds up beyond the configured rate', async () => {
      const limiter = await fresh({ ratePerSecond: 2, burst: 1 });
      const bucket = `key-${ulid()}`;
      for (let i = 0; i < 200; i += 1) await limiter.succeeded(bucket, T0 + i);
      const { grants } = await grantsOver(limiter, bucket, T0 + 1_000, 10_000);
      expect(grants).toBeLessThanOrEqual(21);
    });
  });
}

/**
 * Two limiters over one store (two processes on one database, two Lambdas on one table): one key's
 * budget, whoever asks. The subject is the pair.
 */
export function describeSharedRateLimiterContract(
  name: string,
  factory: ContractFactory<readonly [RateLimiter, RateLimiter], RateLimiterContractOptions>,
): void {
  describe(`RateLimiter contract, shared: ${name}`, () => {
    const fresh = useFixture(factory);

    it('never grants more than the rate in any one-second window, taking from both in turns', async () => {
      const rate = 4;
      const limiters = await fresh({ ratePerSecond: rate, burst: 1 });
      const bucket = `key-${ulid()}`;
      // Each limiter asks on its own schedule (every 70 ms and every 110 ms, some with a horizon),
      // so their asks interleave at every phase of the token interval.
      const asks = [
        ...Array.from({ length: 143 }, (_, i) => ({ at: T0 + 70 * i, who: 0, reserve: i % 3 === 0 })),
        ...Array.from({ length: 91 }, (_, i) => ({ at: T0 + 110 * i, who: 1, reserve: i % 4 === 0 })),
      ].sort((a, b) => a.at - b.at || a.who - b.who);
      const tokens: number[] = [];
      for (const ask of asks) {
        const limiter = limiters[ask.who] as RateLimiter;
        const decision = await limiter.take(bucket, ask.at, ask.reserve ? { reserveWithinMs: 1_000 } : {});
        if (decision.granted) tokens.push(ask.at);
        else if (decision.reserved) tokens.push(decision.retryAtMs);
      }
      tokens.sort((a, b) => a - b);
      const crowded = tokens.filter((at, i) => i >= rate && at - (tokens[i - rate] as number) < 1_000);
      expect(crowded).toEqual([]);
      // Both asked far more than the budget for 10 s; together they had about its 40 tokens in them.
      const inTenSeconds = tokens.filter((at) => at < T0 + 10_000).length;
      expect(inTenSeconds).toBeGreaterThanOrEqual(38);
      expect(inTenSeconds).toBeLessThanOrEqual(41);
    });

    it('slows both when one of them is throttled', async () => {
      const limiters = await fresh({ ratePerSecond: 4, burst: 1 });
      const [first, second] = limiters;
      const bucket = `key-${ulid()}`;
      expect(await first.take(bucket, T0)).toEqual({ granted: true });
      await first.throttled(bucket, T0 + 10);
      const next = await second.take(bucket, T0 + 260);
      expect(next.granted).toBe(false);
      if (next.granted) return;
      // The bucket was emptied and its rate halved: the next token is well over one interval away.
      expect(next.retryAtMs - (T0 + 10)).toBeGreaterThanOrEqual(400);
    });
  });
}

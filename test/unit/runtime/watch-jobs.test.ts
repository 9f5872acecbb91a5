// Following jobs until they are settled: through this process's changes at once, others' by polling.
import { describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { isSettled, watchJobs } from '../../../shared/runtime/watch-jobs';
import { contractJob } from '../../contract/ports.contract';
import { MemoryJobStore } from '../../support/memory-ports';

const later = (job: Job, changes: Partial<Job>): Job => ({ ...job, ...changes, version: job.version + 1 });

describe('watchJobs', () => {
  it('counts finished jobs and jobs waiting for a selection as settled', () => {
    expect(isSettled(contractJob({ status: 'SUCCEEDED' }))).toBe(true);
    expect(isSettled(contractJob({ status: 'CANCELLED' }))).toBe(true);
    expect(isSettled(contractJob({ status: 'AWAITING_INPUT' }))).toBe(true);
    expect(isSettled(contractJob({ status: 'WAITING' }))).toBe(false);
  });

  it('resolves at once, through the subscription, when the last job settles', async () => {
    const store = new MemoryJobStore();
    const a = contractJob();
    const b = contractJob();
    await store.create(a);
    await store.create(b);
    const listeners = new Set<(job: Job) => void>();
    const updates: string[] = [];
    const watching = watchJobs(store, [a.id, b.id], {
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      onUpdate: (job) => updates.push(`${job.id}:${job.status}`),
      pollMs: 60_000,
    });
    await new Promise((resolve) => setImmediate(resolve));
    const doneA = later(a, { status: 'SUCCEEDED' });
    const parkedB = later(b, { status: 'AWAITING_INPUT' });
    for (const listener of listeners) listener(doneA);
    for (const listener of listeners) listener(parkedB);
    const jobs = await watching;
    expect(jobs.map((job) => job.status)).toEqual(['SUCCEEDED', 'AWAITING_INPUT']);
    expect(updates).toContain(`${a.id}:SUCCEEDED`);
    expect(listeners.size).toBe(0);
  });

  it('notices changes made elsewhere by reading the store', async () => {
    const store = new MemoryJobStore();
    const job = contractJob();
    await store.create(job);
    const watching = watchJobs(store, [job.id], { pollMs: 10 });
    await store.commit(later(job, { status: 'FAILED' }), job.version);
    expect((await watching)[0]?.status).toBe('FAILED');
  });

  it('waits past a selection when told that only finished jobs are done', async () => {
    const store = new MemoryJobStore();
    const job = contractJob({ status: 'AWAITING_INPUT' });
    await store.create(job);
    let resolved = false;
    const watching = watchJobs(store, [job.id], { pollMs: 5, isDone: (j) => j.status === 'SUCCEEDED' }).then(
      (jobs) => {
        resolved = true;
        return jobs;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(resolved).toBe(false);
    await store.commit(later(job, { status: 'SUCCEEDED' }), job.version);
    expect((await watching)[0]?.status).toBe('SUCCEEDED');
  });

  it('rejects for a job that does not exist, and when aborted', async () => {
    const store = new MemoryJobStore();
    await expect(watchJobs(store, ['nope'])).rejects.toThrow('no job nope');
    const job = contractJob();
    await store.create(job);
    const abort = new AbortController();
    const watching = watchJobs(store, [job.id], { signal: abort.signal, pollMs: 5 });
    abort.abort(new Error('interrupted'));
    await expect(watching).rejects.toThrow('interrupted');
  });

  it('resolves at once for no jobs', async () => {
    expect(await watchJobs(new MemoryJobStore(), [])).toEqual([]);
  });
});

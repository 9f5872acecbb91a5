import { describe, expect, it } from 'vitest';
import { cancelJob, JobRequestError, retryJob, retryStep, submitJob } from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { demo, happyScript, harness } from './fixtures';

const start = async (h: ReturnType<typeof harness>, extra: Record<string, unknown> = {}) =>
  (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'reduce battery swelling' }, ...extra })).job;

describe('retryJob', () => {
  it('retries a FAILED job from the step it failed at, keeping its earlier run and usage', async () => {
    const base = happyScript(0);
    let submitFails = true;
    const h = harness((op, body, key) => {
      if (op === 'ai33-3Step3SubmitV3' && submitFails)
        throw upstreamError('invalid-request', { code: 68300004, operationId: op });
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.step).toBe('submit');
    const callsBefore = h.client.calls.length;

    submitFails = false;
    const retried = await retryJob(h.deps, job.id);
    expect(retried).toMatchObject({ status: 'QUEUED', step: 'submit', attempts: 0 });
    expect(retried.lastError).toBeUndefined();
    expect(retried.finishedAt).toBeUndefined();
    expect(retried.runs).toHaveLength(1);
    expect(retried.runs![0]).toMatchObject({
      status: 'FAILED',
      step: 'submit',
      retriedFrom: 'submit',
      fromStart: false,
      error: { kind: 'invalid-request', code: 68300004 },
      usage: failed.usage,
    });
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // Only the submit and the download ran again: create and recommend were not repeated.
    const again = h.client.calls.slice(callsBefore).map((c) => c.operationId);
    expect(again).toEqual(['ai33-3Step3SubmitV3', 'fetch']);
    expect(done.usage.calls).toBe(failed.usage.calls + again.length);
    // A deliberate repeat is not a duplicate create.
    expect(done.usage.duplicateCreates).toBe(0);
    expect(done.runs).toHaveLength(1);
  });

  it('goes back to the creating step when the upstream task itself failed', async () => {
    let recommendFails = true;
    const base = happyScript(0);
    const h = harness((op, body, key) => {
      if (op === 'ai33-2Step2V3' && recommendFails) return { status: 'FAILED' };
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed).toMatchObject({
      status: 'FAILED',
      step: 'recommend',
      lastError: { kind: 'upstream-failed' },
    });
    expect(retryStep(demo, failed)).toBe('create');
    recommendFails = false;
    const retried = await retryJob(h.deps, job.id);
    expect(retried.step).toBe('create');
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
  });

  it('retries a CANCELLED job, from the start with fromStart, and counts each run', async () => {
    const h = harness(happyScript(5));
    const job = await start(h);
    await cancelJob(h.deps, job.id);
    const first = await retryJob(h.deps, job.id, { fromStart: true });
    expect(first).toMatchObject({ status: 'QUEUED', step: 'create', context: {}, selections: {} });
    expect(first.runs![0]).toMatchObject({ status: 'CANCELLED', fromStart: true, retriedFrom: 'create' });
    await cancelJob(h.deps, job.id);
    const second = await retryJob(h.deps, job.id);
    expect(second.runs).toHaveLength(2);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
  });

  it('refuses a job that succeeded, one still running, and an unknown one, saying why', async () => {
    const h = harness(happyScript(0));
    const job = await start(h);
    await expect(retryJob(h.deps, job.id)).rejects.toThrow(/QUEUED and has not finished/);
    await drive(h.deps, h.queue, h.clock);
    const refusal = await retryJob(h.deps, job.id).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(JobRequestError);
    expect((refusal as JobRequestError).reason).toBe('conflict');
    expect((refusal as Error).message).toMatch(/SUCCEEDED; start a new job/);
    await expect(retryJob(h.deps, 'nope')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('gives a job whose deadline passed a new deadline as long as its first', async () => {
    const h = harness(happyScript(1000));
    const job = await start(h, { deadlineMs: 60 * 60_000 });
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.lastError?.kind).toMatch(/deadline|poll-timeout/);
    const retried = await retryJob(h.deps, job.id);
    expect(retried.deadlineAt - h.clock.now()).toBe(60 * 60_000);
  });
});

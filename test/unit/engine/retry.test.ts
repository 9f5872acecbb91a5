import { describe, expect, it } from 'vitest';
import {
  cancelJob,
  JobRequestError,
  maxTaskRecreates,
  retryJob,
  retryStep,
  submitJob,
} from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { demo, happyScript, harness } from './fixtures';

const start = async (h: ReturnType<typeof harness>, extra: Record<string, unknown> = {}) =>
  (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'reduce battery swelling' }, ...extra })).job;

describe('retryJob', () => {
  it('retries a FAILED job from the step it failed at, keeping its earlier run and usage', async () => {
    const base = happyScript(0);
    let recommendFails = true;
    const h = harness((op, body, key) => {
      if (op === 'ai33-3Step3SubmitV3' && recommendFails)
        throw upstreamError('invalid-request', { code: 68300004, operationId: op });
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.step).toBe('submit');
    const callsBefore = h.client.calls.length;

    recommendFails = false;
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
    // The submit the upstream refused was not done: sending it again is no repeat.
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
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // The task is created again: a paid repeat, counted.
    expect(done.usage.duplicateCreates).toBe(1);
  });

  it('creates again a task the platform no longer knows ("task ... not found"), counted as a paid repeat', async () => {
    let forget = 1;
    const base = happyScript(0);
    const h = harness((op, body, key) => {
      if (op === 'ai33-2Step2V3' && forget > 0) {
        forget -= 1;
        throw upstreamError('not-found', { code: 67200101, httpStatus: 404, operationId: op });
      }
      return base(op, body, key);
    });
    const creates = () => h.client.calls.filter((call) => call.operationId === 'ai33-1Step1V3').length;
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(creates()).toBe(2);
    expect(done).toMatchObject({ recreatedTasks: 1, usage: { duplicateCreates: 1 } });
  });

  it('fails after creating a forgotten task again twice in a run; a retry creates it again, counted', async () => {
    let forgotten = true;
    const base = happyScript(0);
    const h = harness((op, body, key) => {
      if (op === 'ai33-2Step2V3' && forgotten)
        throw upstreamError('not-found', { code: 67200101, httpStatus: 404, operationId: op });
      return base(op, body, key);
    });
    const creates = () => h.client.calls.filter((call) => call.operationId === 'ai33-1Step1V3').length;
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed).toMatchObject({ status: 'FAILED', step: 'recommend', lastError: { kind: 'not-found' } });
    expect(creates()).toBe(1 + maxTaskRecreates);
    expect(failed.usage.duplicateCreates).toBe(maxTaskRecreates);
    forgotten = false;
    const retried = await retryJob(h.deps, job.id);
    expect(retried).toMatchObject({ step: 'create', recreatedTasks: undefined });
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(creates()).toBe(2 + maxTaskRecreates);
    expect(done.usage.duplicateCreates).toBe(1 + maxTaskRecreates);
  });

  it('counts every create a run from the start sends again', async () => {
    let recommendFails = true;
    const base = happyScript(0);
    const h = harness((op, body, key) => {
      if (op === 'ai33-2Step2V3' && recommendFails) return { status: 'FAILED' };
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    recommendFails = false;
    await retryJob(h.deps, job.id, { fromStart: true });
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // create was sent in the first run and again: a paid repeat.
    expect(done.usage.duplicateCreates).toBe(1);
  });

  it('acts only on the version expected: a job changed meanwhile is refused as a conflict', async () => {
    const h = harness(happyScript(5));
    const job = await start(h);
    const cancelled = await cancelJob(h.deps, job.id, { expectVersion: job.version });
    await expect(retryJob(h.deps, job.id, { expectVersion: job.version })).rejects.toMatchObject({
      reason: 'conflict',
      message: expect.stringMatching(/changed since it was selected/),
    });
    const retried = await retryJob(h.deps, job.id, { expectVersion: cancelled.version });
    expect(retried.status).toBe('QUEUED');
    await expect(cancelJob(h.deps, job.id, { expectVersion: cancelled.version })).rejects.toMatchObject({
      reason: 'conflict',
    });
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

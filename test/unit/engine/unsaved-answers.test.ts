// Unsaved answers in the engine: an answer that came back but could not be stored is kept in
// the job and stored later without calling the upstream again; a create the upstream provably did
// not do (503, refused, never sent) is sent again without being counted as a repeat.
import { describe, expect, it } from 'vitest';
import { reportKeys, retryJob, submitJob } from '../../../shared/engine';
import { drive, settled } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { happyScript, harness } from './fixtures';

const start = async (h: ReturnType<typeof harness>) =>
  (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'reduce battery swelling' } })).job;

const diskError = () =>
  Object.assign(new Error('EACCES: permission denied, open /out/x.json'), { code: 'EACCES' });

describe('a report store that fails after a paid call', () => {
  it('keeps the create answer, fails retryably when the store stays broken, and a retry stores it without calling again', async () => {
    const h = harness(happyScript(0));
    const job = await start(h);
    const realPut = h.reports.put.bind(h.reports);
    let broken = true;
    h.reports.put = async (key, body, type) => {
      if (broken && key.includes('/steps/create')) throw diskError();
      return realPut(key, body, type);
    };
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.step).toBe('create');
    expect(failed.lastError).toMatchObject({ kind: 'storage', retryable: true });
    expect(failed.lastError?.message).toMatch(/EACCES.*kept in the job.*without calling the upstream again/);
    expect(failed.unsaved).toMatchObject({ step: 'create', output: `reports/${job.id}/steps/create.json` });
    // One create, billed once, however many times the store was tried.
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
    expect(failed.usage.calls).toBe(1);

    broken = false;
    await retryJob(h.deps, job.id);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.unsaved).toBeUndefined();
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
    expect(done.usage.duplicateCreates).toBe(0);
    expect(h.reports.text(`reports/${job.id}/steps/create.json`)).toContain('task-1');
  });

  it('recovers by itself when the store works again within the attempts', async () => {
    const h = harness(happyScript(0));
    const job = await start(h);
    const realPut = h.reports.put.bind(h.reports);
    let failures = 2;
    h.reports.put = async (key, body, type) => {
      if (key.includes('/steps/submit') && failures-- > 0) throw diskError();
      return realPut(key, body, type);
    };
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-3Step3SubmitV3')).toHaveLength(1);
  });

  it('keeps the finishing decision when the report cannot be written, and writes it later', async () => {
    const h = harness(happyScript(0));
    const job = await start(h);
    const keys = reportKeys(job.id);
    const realPut = h.reports.put.bind(h.reports);
    let broken = true;
    h.reports.put = async (key, body, type) => {
      if (broken && key === keys.result) throw diskError();
      return realPut(key, body, type);
    };
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.lastError).toMatchObject({ kind: 'storage', retryable: true });
    expect(failed.lastError?.message).toMatch(/the report could not be stored/);
    const downloads = h.client.calls.length;

    broken = false;
    await retryJob(h.deps, job.id);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(h.client.calls.length).toBe(downloads);
    expect(h.reports.text(keys.result)).toBeDefined();
  });

  it('a retry from the start forgets the kept answer', async () => {
    const h = harness(happyScript(0));
    const job = await start(h);
    const realPut = h.reports.put.bind(h.reports);
    let broken = true;
    h.reports.put = async (key, body, type) => {
      if (broken && key.includes('/steps/create')) throw diskError();
      return realPut(key, body, type);
    };
    await drive(h.deps, h.queue, h.clock, { until: settled });
    broken = false;
    const again = await retryJob(h.deps, job.id, { fromStart: true });
    expect(again.unsaved).toBeUndefined();
  });
});

describe('counting repeated creates', () => {
  const failingCreate = (error: () => Error, times: number) => {
    const base = happyScript(0);
    let left = times;
    return (op: string, body: unknown, key: string | undefined) => {
      if (op === 'ai33-1Step1V3' && left-- > 0) throw error();
      return base(op, body, key);
    };
  };

  it('does not count a create sent again after a 503 (nothing behind the gateway took it)', async () => {
    const h = harness(failingCreate(() => upstreamError('server', { httpStatus: 503 }), 2));
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(3);
    expect(done.usage.duplicateCreates).toBe(0);
  });

  it('does not count a create whose connection could not be made', async () => {
    const h = harness(failingCreate(() => upstreamError('network', { unsent: true }), 1));
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(0);
  });

  it('counts a create sent again after a 502 or 504, which may come after the work', async () => {
    for (const httpStatus of [500, 502, 504]) {
      const h = harness(failingCreate(() => upstreamError('server', { httpStatus }), 1));
      const job = await start(h);
      await drive(h.deps, h.queue, h.clock, { until: settled });
      const done = (await h.store.get(job.id))!;
      expect(done.status, String(httpStatus)).toBe('SUCCEEDED');
      expect(done.usage.duplicateCreates, String(httpStatus)).toBe(1);
    }
  });

  it('counts a create whose error answer billed units', async () => {
    const h = harness(
      failingCreate(
        () =>
          upstreamError('server', {
            httpStatus: 503,
            usage: { operationId: 'ai33-1Step1V3', durationMs: 1, billedUnits: 2, ok: false },
          }),
        1,
      ),
    );
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.usage.duplicateCreates).toBe(1);
    expect(done.usage.billedUnits).toBeGreaterThanOrEqual(2);
  });
});

import { describe, expect, it } from 'vitest';
import {
  answerSelection,
  cancelJob,
  inFlightAllowanceMs,
  JobRequestError,
  reportKeys,
  runStep,
  submitJob,
  sweep,
} from '../../../shared/engine';
import { drive, settled } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { happyScript, harness } from './fixtures';

const start = async (h: ReturnType<typeof harness>, extra: Record<string, unknown> = {}) =>
  (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'reduce battery swelling' }, ...extra })).job;

describe('runStep through a whole workflow', () => {
  it('runs to SUCCEEDED with auto selection, polls on schedule, and writes the report', async () => {
    const h = harness(happyScript(2));
    const job = await start(h);
    const t0 = h.clock.now();
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.selections.recommend).toEqual(['r1', 'r2', 'r3']);
    const submitted = h.client.calls.find((c) => c.operationId === 'ai33-3Step3SubmitV3');
    expect(submitted?.body).toMatchObject({ recommend: ['alpha', 'beta', 'gamma'], task_id: 'task-1' });
    // first poll after 10 s, then 20 s and 40 s: three polls, two of them RUNNING
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-2Step2V3')).toHaveLength(3);
    expect(done.finishedAt! - t0).toBe(10_000 + 20_000 + 40_000);
    expect(done.usage.calls).toBe(1 + 3 + 1 + 1);
    expect(done.usage.billedUnits).toBe(6);
    const keys = reportKeys(job.id);
    const result = JSON.parse(h.reports.text(keys.result)!);
    expect(Object.keys(result.steps)).toEqual(['create', 'recommend', 'submit']);
    expect(result.attachments).toEqual([{ fileName: 'solution.pdf', contentType: 'application/pdf' }]);
    const html = h.reports.text(keys.html)!;
    expect(html).toContain('Chosen: r1, r2, r3');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('parks a manual job in AWAITING_INPUT, refuses an invalid answer, and continues with a valid one', async () => {
    const h = harness();
    const job = await start(h, { selection: { mode: 'manual' } });
    await drive(h.deps, h.queue, h.clock);
    const waiting = (await h.store.get(job.id))!;
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.pending?.options.map((o) => o.id)).toEqual(['r1', 'r2', 'r3']);

    await expect(answerSelection(h.deps, job.id, ['r9'])).rejects.toThrow(
      /not among the options offered: r9/,
    );
    await expect(answerSelection(h.deps, job.id, [])).rejects.toThrow(/at least 1/);
    await expect(answerSelection(h.deps, job.id, ['r1', 'r1'])).rejects.toThrow(/twice/);
    expect((await h.store.get(job.id))!.status).toBe('AWAITING_INPUT');

    await answerSelection(h.deps, job.id, ['r2']);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(h.client.calls.find((c) => c.operationId === 'ai33-3Step3SubmitV3')?.body).toMatchObject({
      recommend: ['beta'],
    });
    await expect(answerSelection(h.deps, job.id, ['r1'])).rejects.toThrow(/SUCCEEDED, not awaiting/);
  });

  it('retries after throttling, waiting at least what Retry-After asked', async () => {
    const base = happyScript(0);
    let throttles = 2;
    const h = harness((op, body, key) => {
      if (op === 'ai33-1Step1V3' && throttles-- > 0)
        throw upstreamError('throttled', { retryAfterMs: 7_000 });
      return base(op, body, key);
    });
    const job = await start(h);
    const t0 = h.clock.now();
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.throttledCalls).toBe(2);
    const created = h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3');
    expect(created).toHaveLength(3);
    expect(done.finishedAt! - t0).toBeGreaterThanOrEqual(14_000);
  });

  it('retries a 5xx with backoff, then gives up and explains the failure', async () => {
    const h = harness((op) => {
      if (op === 'ai33-1Step1V3') throw upstreamError('server', { httpStatus: 503, operationId: op });
      return {};
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.lastError).toMatchObject({
      step: 'create',
      operationId: 'ai33-1Step1V3',
      kind: 'server',
      httpStatus: 503,
      retryable: true,
      correlationId: 'corr-err',
    });
    // ai33-1 creates: the engine gives it the catalogue's create policy (4 attempts, not a read's 6).
    expect(failed.lastError?.message).toMatch(/gave up after 4 attempts/);
    expect(h.client.calls).toHaveLength(4);
  });

  it('fails at once on a non-retryable error, with the business code', async () => {
    const h = harness((op) => {
      throw upstreamError('invalid-request', { code: 68300004, operationId: op });
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.lastError).toMatchObject({ kind: 'invalid-request', code: 68300004, retryable: false });
    expect(h.client.calls).toHaveLength(1);
  });

  it('drops duplicate and stale messages by version', async () => {
    const h = harness();
    const job = await start(h);
    const message = { jobId: job.id, version: job.version };
    const first = await runStep(h.deps, message);
    expect(first.outcome).toBe('committed');
    expect(await runStep(h.deps, message)).toEqual({ outcome: 'dropped', reason: 'stale' });
    expect(await runStep(h.deps, { jobId: 'nope', version: 1 })).toEqual({
      outcome: 'dropped',
      reason: 'missing',
    });
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
  });

  it('lets only one of two concurrent deliveries of the same message commit', async () => {
    const h = harness();
    const job = await start(h);
    const message = { jobId: job.id, version: job.version };
    const outcomes = await Promise.all([runStep(h.deps, message), runStep(h.deps, message)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['committed', 'conflict']);
  });

  it('cancels in any non-terminal status and then ignores its messages', async () => {
    const h = harness();
    const job = await start(h, { selection: { mode: 'manual' } });
    await drive(h.deps, h.queue, h.clock);
    const cancelled = await cancelJob(h.deps, job.id);
    expect(cancelled.status).toBe('CANCELLED');
    expect(await runStep(h.deps, { jobId: job.id, version: cancelled.version })).toEqual({
      outcome: 'dropped',
      reason: 'terminal',
    });
    await expect(cancelJob(h.deps, job.id)).rejects.toThrow(/already CANCELLED/);

    const polling = await start(h);
    h.client.calls.length = 0;
    await runStep(h.deps, h.queue.takeNext()!.message); // create → now WAITING on the first poll
    expect((await h.store.get(polling.id))!.status).toBe('WAITING');
    expect((await cancelJob(h.deps, polling.id)).status).toBe('CANCELLED');
    await drive(h.deps, h.queue, h.clock);
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-2Step2V3')).toHaveLength(0);
  });

  it('fails a job that passes its deadline while polling', async () => {
    const h = harness(happyScript(1_000));
    const job = await start(h, { deadlineMs: 60_000 });
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.lastError).toMatchObject({ kind: 'deadline', step: 'recommend' });
  });

  it('fails an unanswered selection at its deadline through the sweeper', async () => {
    const h = harness();
    const job = await start(h, { selection: { mode: 'manual' }, deadlineMs: 3_600_000 });
    await drive(h.deps, h.queue, h.clock);
    h.clock.advance(3_600_000 + 60_000);
    expect((await sweep(h.deps)).expired).toBe(1);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.lastError?.kind).toBe('deadline');
  });

  it('refuses bad requests clearly', async () => {
    const h = harness();
    await expect(submitJob(h.deps, { workflow: 'nope', input: {} })).rejects.toThrow(
      /unknown workflow "nope"; known workflows: demo/,
    );
    await expect(submitJob(h.deps, { workflow: 'demo', input: { issue: '' } })).rejects.toThrow(
      /input\.issue/,
    );
    await expect(submitJob(h.deps, { workflow: 'demo', input: {}, tenant: 'a b' })).rejects.toBeInstanceOf(
      JobRequestError,
    );
  });

  it('returns the same job for the same idempotency key', async () => {
    const h = harness();
    const a = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'x' }, idempotencyKey: 'k1' });
    const b = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'x' }, idempotencyKey: 'k1' });
    expect(b).toEqual({ job: a.job, created: false });
    // The key reused for another request is a conflict, not the first job answered in silence.
    await expect(
      submitJob(h.deps, { workflow: 'demo', input: { issue: 'y' }, idempotencyKey: 'k1' }),
    ).rejects.toMatchObject({ reason: 'conflict' });
  });
});

describe('crashes and the sweeper', () => {
  it('heals a crash between the upstream call and the commit, counting the repeated create', async () => {
    const h = harness();
    const job = await start(h);
    const realCommit = h.store.commit.bind(h.store);
    let commits = 0;
    h.store.commit = async (next, expected) => {
      commits++;
      if (commits === 2) throw new Error('worker died before committing');
      return realCommit(next, expected);
    };
    await expect(runStep(h.deps, h.queue.takeNext()!.message)).rejects.toThrow(/worker died/);
    h.store.commit = realCommit;
    expect(h.queue.pending).toHaveLength(0);

    // While the call might still be under way, the sweeper leaves the job alone...
    h.clock.advance(60_000);
    expect((await sweep(h.deps)).requeued).toBe(0);
    // ...and takes it for stranded once the in-flight allowance and the grace have passed.
    h.clock.advance(inFlightAllowanceMs);
    expect((await sweep(h.deps)).requeued).toBe(1);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(1);
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(2);
  });

  it('re-sends a job whose message was lost after the commit', async () => {
    const h = harness();
    const job = await start(h);
    h.queue.pending = []; // the send after create never happened
    expect((await sweep(h.deps)).requeued).toBe(0); // not overdue yet
    h.clock.advance(31_000);
    expect((await sweep(h.deps)).requeued).toBe(1);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
  });
});

describe('keys and rate', () => {
  it('refreshes a rotated key once after a 401 and carries on', async () => {
    let current = 'sk-old';
    const base = happyScript(0);
    const h = harness((op, body, key) => {
      if (key !== 'sk-new' && op !== 'fetch') throw upstreamError('auth', { httpStatus: 401 });
      return base(op, body, key);
    });
    h.deps.keys = { getKey: async () => current, refresh: async () => (current = 'sk-new') };
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
    expect(h.client.calls.filter((c) => c.apiKey === 'sk-old')).toHaveLength(1);
  });

  it('fails with a clear message when the tenant has no key', async () => {
    const h = harness();
    h.deps.keys = { getKey: async () => undefined, refresh: async () => undefined };
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.lastError).toMatchObject({
      kind: 'auth',
      message: 'no API key is configured for tenant "default"',
    });
  });

  it('reschedules without calling when the rate limiter has no token', async () => {
    const h = harness();
    let denials = 3;
    h.deps.rateLimiter = {
      take: async (_bucket, now) =>
        denials-- > 0 ? { granted: false, retryAtMs: now + 250 } : { granted: true },
      throttled: async () => {},
      succeeded: async () => {},
    };
    const job = await start(h);
    const report = await runStep(h.deps, h.queue.takeNext()!.message);
    // the 250 ms until the next token, plus jitter of up to four token intervals (random() is 0.5 here)
    expect(report).toEqual({ outcome: 'deferred', reason: 'rate-limited', delayMs: 250 + 500, waitMs: 250 });
    expect(h.client.calls).toHaveLength(0);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
  });

  it("does not spend the step's attempts on throttling: twelve throttles in a row, then success", async () => {
    const base = happyScript(0);
    let throttles = 12;
    const h = harness((op, body, key) => {
      if (op === 'ai33-1Step1V3' && throttles-- > 0) throw upstreamError('throttled', { code: 67200002 });
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock, { until: settled });
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.throttledCalls).toBe(12);
    // a refused create created nothing: its retries are not repeats
    expect(done.usage.duplicateCreates).toBe(0);
    expect(done.intents.create).toBe(1);
  });

  it('retries when the key store fails while re-reading a rotated key', async () => {
    const base = happyScript(0);
    let refreshes = 0;
    const h = harness((op, body, key) => {
      if (key !== 'sk-new' && op !== 'fetch') throw upstreamError('auth', { httpStatus: 401 });
      return base(op, body, key);
    });
    h.deps.keys = {
      getKey: async () => (refreshes > 1 ? 'sk-new' : 'sk-old'),
      refresh: async () => {
        refreshes++;
        if (refreshes === 1) throw new Error('secrets store unavailable');
        return 'sk-new';
      },
    };
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
  });
});

describe('deadlines and long waits', () => {
  it('never schedules a look after the deadline, so a long wait ends on time', async () => {
    const h = harness((op) => {
      throw upstreamError('quota-exhausted', { code: 67200001, operationId: op });
    });
    const job = await start(h, { deadlineMs: 10 * 60_000 });
    const t0 = h.clock.now();
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.lastError?.kind).toBe('deadline');
    expect(failed.finishedAt! - t0).toBe(10 * 60_000);
  });
});

describe('a backlog behind the rate limit', () => {
  it('moves nextRunAt forward for a job held back long, so the sweeper adds no copies', async () => {
    const h = harness();
    h.deps.rateLimiter = {
      take: async (_bucket, now) => ({ granted: false, retryAtMs: now + 1_000 }),
      throttled: async () => {},
      succeeded: async () => {},
    };
    const job = await start(h);
    // Deferred for a while without writes: the job's nextRunAt stays where it was.
    for (let i = 0; i < 5; i++) {
      const next = h.queue.takeNext()!;
      h.clock.current = Math.max(h.clock.current, next.visibleAt);
      await runStep(h.deps, next.message);
    }
    expect((await h.store.get(job.id))!.version).toBe(job.version);
    // Held back past 20 s: one write moves it forward, and the sweeper leaves it alone.
    h.clock.advance(21_000);
    const held = h.queue.takeNext()!;
    await runStep(h.deps, held.message);
    const moved = (await h.store.get(job.id))!;
    expect(moved.version).toBe(job.version + 1);
    expect(moved.nextRunAt).toBeGreaterThan(h.clock.now());
    expect(h.queue.pending.map((p) => p.message)).toEqual([{ jobId: job.id, version: moved.version }]);
    expect((await sweep(h.deps)).requeued).toBe(0);
  });
});

describe('the next message after a slow commit', () => {
  it("waits only what is left of the step's wait: the message comes at nextRunAt, not a commit later", async () => {
    const h = harness();
    const commit = h.store.commit.bind(h.store);
    h.store.commit = async (job, expectedVersion) => {
      h.clock.advance(700);
      return commit(job, expectedVersion);
    };
    const job = await start(h);
    await runStep(h.deps, h.queue.sent.at(-1)!.message);
    const committed = (await h.store.get(job.id))!;
    expect(committed.status).toBe('WAITING');
    const next = h.queue.sent.at(-1)!;
    expect(next.message).toEqual({ jobId: job.id, version: committed.version });
    expect(next.delayMs).toBe(10_000 - 700);
    expect(h.clock.now() + next.delayMs).toBe(committed.nextRunAt);
  });
});

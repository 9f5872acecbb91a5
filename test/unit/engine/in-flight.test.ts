/**
 * A paid call in flight: its job never runs beside it, whoever looks, every
 * call's cost is counted, and an unreadable answer to a read is retried.
 */
import { describe, expect, it } from 'vitest';
import {
  cancelJob,
  inFlightAllowanceMs,
  type Job,
  retryJob,
  runStep,
  submitJob,
  sweep,
} from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { happyScript, harness } from './fixtures';

const start = async (h: ReturnType<typeof harness>) =>
  (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'reduce battery swelling' } })).job;

/** A create call that stays open until the test lets it answer. */
function heldCreate() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const base = happyScript(0);
  let creates = 0;
  const script = async (op: string, body: unknown, key: string | undefined) => {
    if (op === 'ai33-1Step1V3') {
      creates++;
      await gate;
    }
    return base(op, body, key);
  };
  return { script, release: () => release(), creates: () => creates };
}

/** `opflow retry` of a job that kept its create's answer: it succeeds with that one create, no repeat. */
async function expectRetriedWithoutPaying(
  h: ReturnType<typeof harness>,
  jobId: string,
  held: ReturnType<typeof heldCreate>,
): Promise<void> {
  await retryJob(h.deps, jobId);
  await drive(h.deps, h.queue, h.clock);
  const done = (await h.store.get(jobId))!;
  expect(done.status).toBe('SUCCEEDED');
  expect(held.creates()).toBe(1);
  expect(done.usage.duplicateCreates).toBe(0);
}

/** A job cancelled while its create is out (held): the step under way, not yet answered. */
async function cancelledUnderItsCreate() {
  const held = heldCreate();
  const h = harness(held.script);
  const job = await start(h);
  const running = runStep(h.deps, h.queue.takeNext()!.message);
  await until(() => held.creates() === 1);
  await cancelJob(h.deps, job.id);
  return { held, h, job, running };
}

const realPause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await realPause(5);
  }
  throw new Error('condition not reached');
}

describe('a paid call in flight', () => {
  it('makes its queued job RUNNING from the claim, before the call answers', async () => {
    const held = heldCreate();
    const h = harness(held.script);
    const job = await start(h);
    expect((await h.store.get(job.id))!.status).toBe('QUEUED');
    const running = runStep(h.deps, h.queue.takeNext()!.message);
    await until(() => held.creates() === 1);
    const claimed = (await h.store.get(job.id))!;
    expect(claimed).toMatchObject({ status: 'RUNNING', version: job.version + 1 });
    expect(claimed.inFlightSince).toBeDefined();
    held.release();
    await running;
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
  });

  it('is never run beside by a message another process sends while the call is alive', async () => {
    const held = heldCreate();
    const h = harness(held.script);
    const job = await start(h);
    const first = h.queue.takeNext()!.message;
    const running = runStep(h.deps, first);
    await until(() => held.creates() === 1);

    // Another process's first sweep looks ahead by the whole allowance and re-sends the job at the
    // version of its intent (the failure this guards against); its runner must leave the job alone.
    await sweep(h.deps, { graceMs: -inFlightAllowanceMs });
    const resent = h.queue.takeNext()!;
    expect(resent.message.version).toBe(job.version + 1);
    const report = await runStep(h.deps, resent.message);
    expect(report).toMatchObject({ outcome: 'deferred', reason: 'not-due' });
    expect(held.creates()).toBe(1);

    held.release();
    await running;
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(0);
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
  });

  it('stays guarded by its heartbeat past the allowance while the call is alive (a long stream)', async () => {
    const held = heldCreate();
    const h = harness(held.script, { inFlight: { heartbeatMs: 10 } });
    const job = await start(h);
    const running = runStep(h.deps, h.queue.takeNext()!.message);
    await until(() => held.creates() === 1);
    const marked = (await h.store.get(job.id))!;

    // Three allowances go by; each time the heartbeat pushes nextRunAt out again.
    for (let round = 0; round < 3; round++) {
      const before = (await h.store.get(job.id))!.version;
      h.clock.advance(inFlightAllowanceMs / 2);
      await until(async () => (await h.store.get(job.id))!.version > before);
      const alive = (await h.store.get(job.id))!;
      expect(alive.nextRunAt).toBe(h.clock.now() + inFlightAllowanceMs);
      expect(alive.inFlightSince).toBe(marked.inFlightSince);
      expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(0);
    }
    const late = { jobId: job.id, version: (await h.store.get(job.id))!.version };
    expect(await runStep(h.deps, late)).toMatchObject({ outcome: 'deferred', reason: 'not-due' });

    held.release();
    const report = await running;
    expect(report.outcome).toBe('committed');
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(0);
    expect(held.creates()).toBe(1);
  });

  it('is taken over once its caller stops beating (a dead worker), counting the repeat', async () => {
    const h = harness();
    const job = await start(h);
    const realCommit = h.store.commit.bind(h.store);
    let commits = 0;
    h.store.commit = async (next: Job, expected: number) => {
      commits++;
      if (commits === 2) throw new Error('worker died before committing');
      return realCommit(next, expected);
    };
    await expect(runStep(h.deps, h.queue.takeNext()!.message)).rejects.toThrow(/worker died/);
    h.store.commit = realCommit;
    h.clock.advance(inFlightAllowanceMs - 1_000);
    expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(0);
    h.clock.advance(2_000);
    expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(1);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(1);
  });

  it('runs at once when the caller named on the job is known to be gone (a restarted process)', async () => {
    const gone = new Set(['host/1/dead']);
    const h = harness(happyScript(0), { inFlight: { by: 'host/2/alive', isGone: (by) => gone.has(by) } });
    const job = await start(h);
    const stored = (await h.store.get(job.id))!;
    // The state a process killed during its create call leaves behind.
    await h.store.commit(
      {
        ...stored,
        version: stored.version + 1,
        intents: { create: 1 },
        inFlightSince: h.clock.now(),
        inFlightBy: 'host/1/dead',
        nextRunAt: h.clock.now() + inFlightAllowanceMs,
      },
      stored.version,
    );
    h.queue.pending = [];
    const report = await runStep(h.deps, { jobId: job.id, version: stored.version + 1 });
    expect(report.outcome).toBe('committed');
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.duplicateCreates).toBe(1);

    // The same state left by a live process is left alone.
    const other = await start(h);
    const fresh = (await h.store.get(other.id))!;
    await h.store.commit(
      {
        ...fresh,
        version: fresh.version + 1,
        intents: { create: 1 },
        inFlightSince: h.clock.now(),
        inFlightBy: 'host/3/alive',
        nextRunAt: h.clock.now() + inFlightAllowanceMs,
      },
      fresh.version,
    );
    expect(await runStep(h.deps, { jobId: other.id, version: fresh.version + 1 })).toMatchObject({
      outcome: 'deferred',
      reason: 'not-due',
    });
  });

  it('counts the cost of a call whose outcome lost to another writer (cancelled meanwhile)', async () => {
    const { held, h, job, running } = await cancelledUnderItsCreate();
    held.release();
    expect((await running).outcome).toBe('conflict');
    const cancelled = (await h.store.get(job.id))!;
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.usage.calls).toBe(1);
    expect(cancelled.usage.billedUnits).toBe(1);

    // Its answer is kept with the job: a retry goes on from it instead of paying for the create again.
    expect(cancelled.unsaved?.step).toBe('create');
    await expectRetriedWithoutPaying(h, job.id, held);
  });

  it('keeps the answer of a call whose job reached its deadline meanwhile, so a retry pays nothing twice', async () => {
    const held = heldCreate();
    const h = harness(held.script);
    const job = (
      await submitJob(h.deps, {
        workflow: 'demo',
        input: { issue: 'reduce battery swelling' },
        deadlineMs: 30_000,
      })
    ).job;
    const running = runStep(h.deps, h.queue.takeNext()!.message);
    await until(() => held.creates() === 1);

    // The deadline passes while the create is out: a message at the job's version fails the job.
    h.clock.advance(31_000);
    const marked = (await h.store.get(job.id))!;
    expect(await runStep(h.deps, { jobId: job.id, version: marked.version })).toMatchObject({
      outcome: 'committed',
      job: { status: 'FAILED', lastError: { kind: 'deadline' } },
    });
    // Retried now, the new run would create beside the call still out.
    await expect(retryJob(h.deps, job.id, { deadlineMs: 60_000 })).rejects.toThrow(
      /still under way; retry it once its answer is in/,
    );
    held.release();
    expect((await running).outcome).toBe('conflict');
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.inFlightSince).toBeUndefined();
    expect(failed.usage.calls).toBe(1);
    expect(failed.unsaved?.step).toBe('create');
    await expectRetriedWithoutPaying(h, job.id, held);
  });
});

/** Creates that each stay open until the test lets that one answer (the first, the second, ...). */
function heldCreates(count: number) {
  const gates = Array.from({ length: count }, () => {
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((done) => {
      resolve = done;
    });
    return { promise, resolve };
  });
  const base = happyScript(0);
  let creates = 0;
  const script = async (op: string, body: unknown, key: string | undefined) => {
    if (op === 'ai33-1Step1V3') await gates[creates++]?.promise;
    return base(op, body, key);
  };
  return { script, release: (n: number) => gates[n]?.resolve(), creates: () => creates };
}

/** A caller frozen past its allowance (no heartbeat): the sweeper sends its job, another runner takes the call over. */
async function takeOver(h: ReturnType<typeof harness>, jobId: string) {
  h.clock.advance(inFlightAllowanceMs + 1_000);
  expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(1);
  const resent = h.queue.takeNext()!;
  expect(resent.message.version).toBe((await h.store.get(jobId))!.version);
  return runStep(h.deps, resent.message);
}

describe('a call whose outcome lost to another writer', () => {
  it('keeps its job from being retried until it is back, so the retry pays nothing twice', async () => {
    const { held, h, job, running } = await cancelledUnderItsCreate();
    // Retried now, the new run would create beside the call still out, and the call's late usage
    // would make the new run's commit lose.
    await expect(retryJob(h.deps, job.id)).rejects.toThrow(/still under way; retry it once its answer is in/);
    held.release();
    expect((await running).outcome).toBe('conflict');
    const cancelled = (await h.store.get(job.id))!;
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      inFlightSince: undefined,
      unsaved: { step: 'create' },
    });
    await expectRetriedWithoutPaying(h, job.id, held);
  });

  it('sends the message of a job taken over meanwhile for the version its late usage leaves', async () => {
    const held = heldCreates(1);
    const h = harness(held.script);
    const job = await start(h);
    const frozen = runStep(h.deps, h.queue.takeNext()!.message);
    await until(() => held.creates() === 1);
    // The take-over's create answers at once; the job goes on to poll its task.
    expect((await takeOver(h, job.id)).outcome).toBe('committed');
    expect((await h.store.get(job.id))!.step).toBe('recommend');
    held.release(0);
    expect((await frozen).outcome).toBe('conflict');
    const stored = (await h.store.get(job.id))!;
    expect(stored.usage).toMatchObject({ calls: 2, duplicateCreates: 1 });
    expect(h.queue.pending.map((p) => p.message)).toContainEqual({ jobId: job.id, version: stored.version });
    // No wait for the sweeper: the job runs to its end on its messages.
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
    expect(held.creates()).toBe(2);
  });

  it("waits for a take-over's call in flight instead of making it lose its commit and its paid answer", async () => {
    const held = heldCreates(2);
    const h = harness(held.script);
    const job = await start(h);
    const frozen = runStep(h.deps, h.queue.takeNext()!.message);
    await until(() => held.creates() === 1);
    const takingOver = takeOver(h, job.id);
    await until(() => held.creates() === 2);
    const realCommit = h.store.commit.bind(h.store);
    let lost = 0;
    h.store.commit = async (next: Job, expected: number) => {
      const won = await realCommit(next, expected);
      if (!won) lost++;
      return won;
    };
    // The frozen call comes back first: its commit loses to the take-over's claim.
    held.release(0);
    await until(() => lost === 1);
    held.release(1);
    expect((await takingOver).outcome).toBe('committed');
    expect((await frozen).outcome).toBe('conflict');
    expect(lost).toBe(1);
    const stored = (await h.store.get(job.id))!;
    expect(stored).toMatchObject({ step: 'recommend', usage: { calls: 2, duplicateCreates: 1 } });
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
    expect(held.creates()).toBe(2);
  });
});

describe('an unreadable answer', () => {
  it('to a poll is retried like a passing fault, and the job succeeds', async () => {
    const base = happyScript(1);
    let malformed = 2;
    const h = harness((op, body, key) => {
      if (op === 'ai33-2Step2V3' && malformed-- > 0) {
        throw upstreamError('protocol', { message: 'ai33-2Step2V3: unreadable answer: not JSON' });
      }
      return base(op, body, key);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage.failedCalls).toBe(2);
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
  });

  it('to a create is final (it may have been billed), as before', async () => {
    const h = harness((op) => {
      if (op === 'ai33-1Step1V3') throw upstreamError('protocol');
      return happyScript(0)(op, undefined, undefined);
    });
    const job = await start(h);
    await drive(h.deps, h.queue, h.clock);
    const failed = (await h.store.get(job.id))!;
    expect(failed.status).toBe('FAILED');
    expect(failed.lastError?.kind).toBe('protocol');
    expect(h.client.calls.filter((c) => c.operationId === 'ai33-1Step1V3')).toHaveLength(1);
  });
});

/**
 * A job waiting for its key's token never waits past its deadline: it fails at its deadline, not
 * when its turn would have come. A backlog far larger than the key's budget, on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { SqliteRateLimiter } from '../../../../shared/backends/local';
import {
  advance,
  type Job,
  type RateLimiter,
  releaseParked,
  runStep,
  submitJob,
} from '../../../../shared/engine';
import { drive } from '../../../support/memory-ports';
import { demo, happyScript, harness } from '../fixtures';

/** `jobs` demo jobs with a 20 s deadline on a key of 1 call/s: most cannot finish in time. */
async function backlogWithDeadlines(jobs: number, carriesTokens: boolean): Promise<Job[]> {
  const h = harness(happyScript(0), { rateLimiter: SqliteRateLimiter.inMemory({ ratePerSecond: 1 }) });
  if (carriesTokens) Object.defineProperty(h.queue, 'carriesTokens', { value: true });
  let seed = 7;
  h.deps.random = () => {
    seed = (seed * 9301 + 49297) % 233280;
    return seed / 233280;
  };
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++) {
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: `issue ${i}` },
      deadlineMs: 20_000,
    });
    ids.push(job.id);
  }
  await drive(h.deps, h.queue, h.clock);
  return (await Promise.all(ids.map((id) => h.store.get(id)))).filter((job): job is Job => job !== undefined);
}

describe('a job waiting for a token', () => {
  for (const carriesTokens of [false, true]) {
    it(`fails at its deadline, not when its turn comes (messages ${carriesTokens ? 'hold' : 'do not hold'} tokens)`, async () => {
      const jobs = await backlogWithDeadlines(60, carriesTokens);
      const late = jobs.filter((job) => job.status === 'FAILED' && job.lastError?.kind === 'deadline');
      // The budget (1 call/s for 20 s) finishes a few jobs; the rest fail at their deadline.
      expect(late.length).toBeGreaterThan(40);
      const overdue = late.map((job) => job.updatedAt - job.deadlineAt);
      expect(Math.max(...overdue)).toBeLessThanOrEqual(1_000);
      expect(jobs.every((job) => job.status === 'SUCCEEDED' || job.status === 'FAILED')).toBe(true);
    });
  }
});

/** A key whose line never has room: no token now, none within any horizon. */
const fullLine: RateLimiter = {
  take: async (_bucket, now) => ({ granted: false, retryAtMs: now + 3_600_000 }),
  reserveAhead: async () => undefined,
  throttled: async () => {},
  succeeded: async () => {},
};

describe('admission and deadlines', () => {
  it('does not park a job whose deadline is nearer than the queue can delay: it fails at its deadline', async () => {
    const h = harness(happyScript(0), { rateLimiter: fullLine, admission: true });
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: 'x' },
      deadlineMs: 10 * 60_000,
    });
    await drive(h.deps, h.queue, h.clock);
    const after = await h.store.get(job.id);
    expect(after?.parked).toBeUndefined();
    expect(after).toMatchObject({ status: 'FAILED', lastError: { kind: 'deadline' } });
    expect(after!.updatedAt).toBe(job.deadlineAt);
  });

  it('sends a parked job past its deadline at the next release round, and the runner fails it', async () => {
    const h = harness(happyScript(0), { rateLimiter: fullLine, admission: true });
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: 'x' },
      deadlineMs: 60 * 60_000,
    });
    h.queue.pending = [];
    const parked = advance(
      demo,
      job,
      { type: 'park', bucket: 'b', withinMs: 2_000 },
      h.clock.now(),
      h.deps.random,
    );
    expect(await h.store.commit(parked.job, job.version)).toBe(true);
    const source = { listParked: async () => [{ id: job.id, class: 'C' }] };
    // Before its deadline the line's being full keeps it parked.
    expect(await releaseParked(h.deps, source, 'b')).toMatchObject({ released: 0 });
    expect(h.queue.pending).toEqual([]);
    h.clock.current = job.deadlineAt;
    expect(await releaseParked(h.deps, source, 'b')).toMatchObject({ released: 1 });
    const [sent] = h.queue.pending;
    expect(sent?.visibleAt).toBe(job.deadlineAt);
    await runStep(h.deps, sent!.message);
    expect(await h.store.get(job.id)).toMatchObject({ status: 'FAILED', lastError: { kind: 'deadline' } });
  });
});

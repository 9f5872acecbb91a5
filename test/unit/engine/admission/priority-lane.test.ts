/**
 * The priority lane: a `high` job's call takes over the next token reserved ahead, and that token's
 * holder takes a new one at the line's end, so no token is spent twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteRateLimiter } from '../../../../shared/backends/local';
import { type Job, submitJob } from '../../../../shared/engine';
import { drive } from '../../../support/memory-ports';
import { happyScript, harness } from '../fixtures';

describe('the SQLite limiter on an in-memory database', () => {
  it('hands a priority call the next reserved token, which its holder then finds gone', async () => {
    const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 2 });
    expect((await limiter.take('k', 0)).granted).toBe(true);
    const reserved: number[] = [];
    for (let i = 0; i < 6; i++) {
      const decision = await limiter.take('k', 100, { reserveWithinMs: 15_000 });
      if (!decision.granted && decision.reserved) reserved.push(decision.retryAtMs);
    }
    expect(reserved).toEqual([500, 1_000, 1_500, 2_000, 2_500, 3_000]);
    expect(await limiter.cutIn('k', 700, 'urgent')).toBe(1_000);
    expect(await limiter.stillHeld('k', 1_000, 'holder')).toBe(false);
    expect(await limiter.stillHeld('k', 1_000, 'urgent')).toBe(true);
    expect(await limiter.stillHeld('k', 1_500, 'holder')).toBe(true);
    // An idle key has a token now: no cut-in.
    expect(await limiter.cutIn('idle', 700, 'urgent')).toBeUndefined();
  });
});

describe('the SQLite limiter', () => {
  it("hands a priority call of one process the next token another process's job reserved", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-lane-'));
    const databases = [openLocalDatabase(join(dir, 'opflow.db')), openLocalDatabase(join(dir, 'opflow.db'))];
    try {
      const [batch, urgent] = databases.map((db) => new SqliteRateLimiter(db, { ratePerSecond: 2 })) as [
        SqliteRateLimiter,
        SqliteRateLimiter,
      ];
      expect((await batch.take('k', 0)).granted).toBe(true);
      for (let i = 0; i < 4; i++) await batch.take('k', 100, { reserveWithinMs: 15_000 });
      // The other process sees the line: no token now, and the next reserved one is taken over.
      expect((await urgent.take('k', 200)).granted).toBe(false);
      expect(await urgent.saturated('k', 200)).toBe(true);
      expect(await urgent.cutIn('k', 700, 'urgent')).toBe(1_000);
      expect(await batch.stillHeld('k', 1_000, 'holder')).toBe(false);
      expect(await batch.stillHeld('k', 1_500, 'holder')).toBe(true);
      expect(await urgent.cutIn('k', 700, 'second')).toBe(1_500);
    } finally {
      for (const db of databases) db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `count` demo jobs on a key of 1 call/s, then one more after `afterSteps` steps: its span. */
async function lateJobSpan(priority: 'high' | 'normal', count = 30, afterSteps = 40) {
  const h = harness(happyScript(0), { rateLimiter: SqliteRateLimiter.inMemory({ ratePerSecond: 1 }) });
  for (let i = 0; i < count; i++)
    await submitJob(h.deps, { workflow: 'demo', input: { issue: `issue ${i}` } });
  await drive(h.deps, h.queue, h.clock, { maxSteps: afterSteps }).catch(() => undefined);
  const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'urgent' }, priority });
  await drive(h.deps, h.queue, h.clock);
  const done = (await h.store.get(job.id)) as Job;
  const all = (await h.store.list({ limit: 1000 })).jobs;
  return { span: (done.finishedAt ?? 0) - done.createdAt, done, all };
}

describe('a high job behind a saturated key', () => {
  it('finishes near its own calls and waits, far ahead of a normal job submitted at the same time', async () => {
    const high = await lateJobSpan('high');
    const normal = await lateJobSpan('normal');
    const alone = await lateJobSpan('normal', 0, 0);
    expect(high.done.status).toBe('SUCCEEDED');
    expect(high.all.every((job) => job.status === 'SUCCEEDED')).toBe(true);
    // Each of its calls waits at most one token interval (1 s) more than on an idle key.
    const calls = high.done.usage.calls;
    expect(calls).toBeGreaterThan(2);
    expect(high.span).toBeLessThanOrEqual(alone.span + calls * 1_000);
    expect(normal.span).toBeGreaterThan(3 * high.span);
    // Every job still made each call once: the holders whose tokens it took waited, none was lost.
    const total = (jobs: Job[]) => jobs.reduce((sum, job) => sum + job.usage.calls, 0);
    expect(total(high.all)).toBe(total(normal.all));
  });
});

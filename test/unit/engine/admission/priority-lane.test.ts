/**
 * The priority lane: a `high` job's call takes over the next token reserved ahead, and that token's
 * holder takes a new one at the line's end, so no token is spent twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteRateLimiter } from '../../../../shared/backends/local';
import type { LocalDatabase } from '../../../../shared/backends/local/database';
import { readTokenGrants } from '../../../../shared/backends/local/sqlite-rate-limiter';
import { type EngineDeps, type Job, runStep, submitJob } from '../../../../shared/engine';
import { tokensWaited } from '../../../../shared/engine/admission/priority-lane';
import { drive, FakeClock, MemoryQueue } from '../../../support/memory-ports';
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

  it("logs the tokens it gives, each carrying its call's first refused ask; refusals add no row", async () => {
    const db = openLocalDatabase(':memory:');
    const limiter = new SqliteRateLimiter(db, { ratePerSecond: 2 });
    const share = (jobId: string) => ({ tenant: 'default', jobId });
    expect((await limiter.take('k', 0, { share: share('a') })).granted).toBe(true);
    // Refused twice (no reservation within its horizon), then granted once the token is free.
    expect((await limiter.take('k', 100, { share: share('b') })).granted).toBe(false);
    expect((await limiter.take('k', 300, { share: share('b') })).granted).toBe(false);
    expect((await limiter.take('k', 500, { share: share('b') })).granted).toBe(true);
    // Its next call asks anew: the first ask was used up by the grant.
    expect((await limiter.take('k', 600, { reserveWithinMs: 5_000, share: share('b') })).granted).toBe(false);
    expect(readTokenGrants(db).get('k')).toEqual([
      { seq: 1, by: 'a', askedAt: 0, tokenAt: 0, kind: 'granted' },
      { seq: 2, by: 'b', askedAt: 100, tokenAt: 500, kind: 'granted' },
      { seq: 3, by: 'b', askedAt: 600, tokenAt: 1_000, kind: 'reserved' },
    ]);
    expect(tokensWaited(readTokenGrants(db).get('k') ?? [], 'b')).toEqual([0, 0]);
    db.close();
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

/**
 * Two opflow processes on one database file, as two engines in this test: each its own job store,
 * queue and limiter (its own connection to the file), one clock. Process A runs a batch of 12 demo
 * jobs on a key of 1 call/s; once its line is long, process B submits one job of `priority`. Both
 * run to the end, each next message in time order. Returns B's job and the file's grant log.
 */
async function twoProcesses(priority: 'high' | 'normal') {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-lane-'));
  const databases = [openLocalDatabase(join(dir, 'opflow.db')), openLocalDatabase(join(dir, 'opflow.db'))];
  const clock = new FakeClock();
  const processOn = (db: LocalDatabase) => {
    const queue = new MemoryQueue(clock);
    const rateLimiter = new SqliteRateLimiter(db, { ratePerSecond: 1 });
    return harness(happyScript(0), { clock, queue, rateLimiter }).deps;
  };
  try {
    const [a, b] = databases.map(processOn) as [EngineDeps, EngineDeps];
    const queueOf = (deps: EngineDeps) => deps.queue as MemoryQueue;
    /** Runs the next message of either process (the sooner); false when none is left. */
    const next = async (processes: EngineDeps[]): Promise<boolean> => {
      const due = processes
        .map((deps) => ({ deps, at: Math.min(...queueOf(deps).pending.map((entry) => entry.visibleAt)) }))
        .filter((entry) => Number.isFinite(entry.at))
        .sort((x, y) => x.at - y.at)[0];
      const message = due && queueOf(due.deps).takeNext();
      if (!due || !message) return false;
      if (message.visibleAt > clock.now()) clock.current = message.visibleAt;
      await runStep(due.deps, message.message);
      return true;
    };
    for (let i = 0; i < 12; i++) await submitJob(a, { workflow: 'demo', input: { issue: `issue ${i}` } });
    for (let step = 0; step < 15; step++) expect(await next([a])).toBe(true);
    const { job } = await submitJob(b, { workflow: 'demo', input: { issue: 'urgent' }, priority });
    for (let step = 0; await next([a, b]); step++) expect(step).toBeLessThan(10_000);
    const grants = [...readTokenGrants(databases[0]!).values()];
    expect(grants).toHaveLength(1);
    const batch = (await a.store.list({ limit: 1000 })).jobs;
    return { job: (await b.store.get(job.id)) as Job, grants: grants[0]!, batch };
  } finally {
    for (const db of databases) db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('priority across two processes on one database file', () => {
  it("gives a high job of one process the next token of another process's saturated line, counted in tokens", async () => {
    const high = await twoProcesses('high');
    expect(high.job.status).toBe('SUCCEEDED');
    expect(high.batch.every((job) => job.status === 'SUCCEEDED')).toBe(true);
    // Each of its calls: at most one token of the batch between its ask and its own token.
    const waited = tokensWaited(high.grants, high.job.id);
    // One token for each call that takes one: create, recommend (done at its first poll), submit.
    expect(waited).toHaveLength(3);
    expect(Math.max(...waited), `tokens waited per call: ${waited.join(', ')}`).toBeLessThanOrEqual(1);
    expect(high.grants.some((grant) => grant.by === high.job.id && grant.kind === 'cut-in')).toBe(true);
    // A normal job submitted the same way takes its place at the line's end, behind the batch's tokens.
    const normal = await twoProcesses('normal');
    expect(normal.job.status).toBe('SUCCEEDED');
    expect(
      Math.max(...tokensWaited(normal.grants, normal.job.id)),
      `normal: ${tokensWaited(normal.grants, normal.job.id).join(', ')}`,
    ).toBeGreaterThan(10);
    // Every token given once: no two grants on one token's time (a cut-in's token is its cutter's).
    for (const { grants } of [high, normal]) {
      const cut = new Set(grants.filter((grant) => grant.kind === 'cut-in').map((grant) => grant.tokenAt));
      const given = grants.filter(
        (grant) => grant.kind === 'cut-in' || (grant.kind !== 'refused' && !cut.has(grant.tokenAt)),
      );
      expect(new Set(given.map((grant) => grant.tokenAt)).size).toBe(given.length);
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

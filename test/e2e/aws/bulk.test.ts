// Bulk actions by filter on aws, end to end: POST /jobs/bulk through the gateway to the bundled api
// function on DynamoDB, the step worker on SQS. A dry run counts and changes nothing, a call without
// one is refused, a set that changed since the dry run is refused with the new count, and the
// confirmed call acts on exactly what was counted: queued jobs cancelled, then retried to the end
// (each paying its one call), and jobs waiting for a selection answered with their defaults,
// recorded as answered in bulk; jobs failed on their deadline retried by filter with a new deadline
// to SUCCEEDED, and a caller bound to a tenant (a JWT's tenant claim) counting and retrying only its
// own tenant's jobs, refused another tenant's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({ sandbox: { ledgerBodies: true } });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

type Answer = Awaited<ReturnType<AwsWorld['api']>>;
const bulk = (body: Record<string, unknown>): Promise<Answer> => world.api('POST', '/jobs/bulk', { body });
const statusOf = async (id: string) => (await world.store.get(id))?.status;
const count = (query: string) => world.submit({ workflow: 'patent-count', input: { query } });
const countCalls = (query: string) =>
  world.sandbox.ledger.entries().filter((entry) => JSON.stringify(entry.body ?? '').includes(query)).length;

describe('bulk actions on aws (job API on DynamoDB)', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('cancels what a dry run counted, refuses a changed set, then retries them to the end', async () => {
    const queued = [await count('TTL:(bulk lamp 1)'), await count('TTL:(bulk lamp 2)')];
    const where = { workflow: 'patent-count', status: ['QUEUED'] };
    const dry = await bulk({ action: 'cancel', dryRun: true, where });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, count: 2 });
    for (const id of queued) expect(await statusOf(id)).toBe('QUEUED');
    const blind = await bulk({ action: 'cancel', where });
    expect(blind.status).toBe(400);

    // One more job since the dry run: the confirmed call is refused, with the new count.
    queued.push(await count('TTL:(bulk lamp 3)'));
    const stale = await bulk({
      action: 'cancel',
      where,
      confirm: { count: 2, selection: dry.body.selection },
    });
    expect(stale.status).toBe(409);
    const preview = stale.body.preview as { count: number; selection: string };
    expect(preview.count).toBe(3);
    const cancelled = await bulk({
      action: 'cancel',
      where,
      confirm: { count: preview.count, selection: preview.selection },
    });
    expect(cancelled.body).toMatchObject({ dryRun: false, count: 3, done: 3, skipped: 0 });
    for (const id of queued) expect(await statusOf(id)).toBe('CANCELLED');
    // Their queued messages find them cancelled: nothing is called.
    await world.settle(queued, { drain: true });
    expect(countCalls('bulk lamp')).toBe(0);

    const retryWhere = { workflow: 'patent-count', status: ['CANCELLED'] };
    const retryDry = await bulk({ action: 'retry', dryRun: true, where: retryWhere });
    expect(retryDry.body).toMatchObject({ count: 3 });
    const retried = await bulk({
      action: 'retry',
      where: retryWhere,
      confirm: { count: 3, selection: retryDry.body.selection },
    });
    expect(retried.body).toMatchObject({ done: 3, skipped: 0 });
    const jobs = await world.settle(queued, { drain: true });
    expect(jobs.map((job) => job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    for (const n of [1, 2, 3]) expect(countCalls(`bulk lamp ${n}`)).toBe(1);
  });

  it('answers the jobs waiting for a selection with their defaults, recorded as a bulk answer', async () => {
    const ids = [];
    for (const text of ['A hinge that folds twice and locks.', 'A lamp whose shade turns into a fan.'])
      ids.push(
        await world.submit({ workflow: 'novelty-check', input: { text }, selection: { mode: 'manual' } }),
      );
    const waiting = await world.settle(ids);
    expect(waiting.map((job) => job.status)).toEqual(['AWAITING_INPUT', 'AWAITING_INPUT']);
    const where = { status: ['AWAITING_INPUT'], workflow: 'novelty-check' };
    const options = { take: 'defaults' };
    const dry = await bulk({ action: 'answer', dryRun: true, where, options });
    expect(dry.body).toMatchObject({ count: 2 });
    const answered = await bulk({
      action: 'answer',
      where,
      options,
      confirm: { count: 2, selection: dry.body.selection },
    });
    expect(answered.body).toMatchObject({ done: 2, skipped: 0 });
    for (const [index, id] of ids.entries()) {
      const job = (await world.store.get(id)) as Job;
      expect(job.status).not.toBe('AWAITING_INPUT');
      expect(job.answers?.at(-1)?.options.length).toBeGreaterThan(0);
      expect(job.answers?.at(-1)).toMatchObject({
        step: waiting[index]!.pending!.step,
        via: 'bulk',
      });
    }
  });
  it('retries the jobs failed on their deadline to the end; a tenant-bound caller acts only on its own', async () => {
    // Two of the default tenant's jobs fail on their deadline (their tasks outlast 2 s of the clock).
    const late = [];
    for (const text of ['A hinge that folds twice and locks.', 'A lamp that dims itself at dusk.'])
      late.push(await world.submit({ workflow: 'technical-disclosure', input: { text }, deadlineMs: 2_000 }));
    const failed = await world.settle(late, { drain: true });
    expect(failed.map((job) => [job.status, job.lastError?.kind])).toEqual([
      ['FAILED', 'deadline'],
      ['FAILED', 'deadline'],
    ]);
    // One of tenant acme's, submitted by a caller bound to it: no key is configured for acme, so it fails.
    world.gateway.claims = { sub: 'user-acme', tenant: 'acme' };
    let theirs: string;
    try {
      theirs = await world.submit({ workflow: 'patent-count', input: { query: 'TTL:(acme lamp)' } });
      await world.settle([theirs], { drain: true });
      expect(await statusOf(theirs)).toBe('FAILED');
      // Bound to acme: its dry run counts acme's failed job only, another tenant's is refused. (A bulk
      // redrive is the same call on batches' items: the local e2e runs one, test/e2e/local/bulk.test.ts.)
      const where = { status: ['FAILED'] };
      const dry = await bulk({ action: 'retry', dryRun: true, where });
      expect(dry.status, JSON.stringify(dry.body)).toBe(200);
      expect(dry.body, JSON.stringify(dry.body)).toMatchObject({ count: 1 });
      expect((dry.body.sample as { id: string }[]).map((job) => job.id)).toEqual([theirs]);
      const other = await bulk({ action: 'retry', dryRun: true, where: { ...where, tenant: 'default' } });
      expect(other.status).toBe(403);
      const retried = await bulk({
        action: 'retry',
        where,
        confirm: { count: 1, selection: dry.body.selection },
      });
      expect(retried.body).toMatchObject({ done: 1, skipped: 0 });
    } finally {
      world.gateway.claims = undefined;
    }
    // The default tenant's jobs were not touched by acme's retry.
    for (const id of late) expect(await statusOf(id)).toBe('FAILED');

    // The operator retries the deadline failures with a new deadline: they run to the end, as the
    // same jobs, their first run kept.
    const where = { tenant: 'default', workflow: 'technical-disclosure', failureKind: 'deadline' };
    const options = { deadlineMs: 600_000 };
    const dry = await bulk({ action: 'retry', dryRun: true, where, options });
    expect(dry.body).toMatchObject({ count: 2 });
    for (const id of late) expect(await statusOf(id)).toBe('FAILED');
    const retried = await bulk({
      action: 'retry',
      where,
      options,
      confirm: { count: 2, selection: dry.body.selection },
    });
    expect(retried.body).toMatchObject({ done: 2, skipped: 0 });
    const jobs = await world.settle([...late, theirs], { drain: true });
    expect(jobs.map((job) => job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'FAILED']);
    for (const job of jobs.slice(0, 2)) expect(job.runs).toHaveLength(1);
    expect(jobs[2]!.runs).toHaveLength(1);
  });
});

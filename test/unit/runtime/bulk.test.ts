// Bulk actions by filter on the local backend's real SQLite store: the dry run's count, digest and
// sample; the confirmation; pages; the time budget and its cursor; jobs changed meanwhile skipped;
// two runs at once acting once per job.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { submitJob } from '../../../shared/engine/job-commands';
import type { FailureKind, Job, JobStatus } from '../../../shared/engine/job-record';
import { BulkSelectionChanged, previewBulk, runBulk } from '../../../shared/runtime/bulk';
import { type BulkRequestInput, bulkRequestSchema } from '../../../shared/runtime/bulk-request';
import { memoryEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
beforeEach(async () => {
  engine = await memoryEngine();
});
afterEach(async () => engine.close());

const request = (input: BulkRequestInput) => bulkRequestSchema.parse(input);

/** A job of patent-count, set to `status` (FAILED with an error of `kind`). */
async function seed(
  status: JobStatus,
  extra: { tenant?: string; label?: string; kind?: FailureKind; workflow?: string; batchId?: string } = {},
): Promise<Job> {
  const { job } = await submitJob(engine.deps, {
    workflow: extra.workflow ?? 'patent-count',
    input: extra.workflow === 'llm-chat' ? { message: 'hello' } : { query: `TTL:(lamp ${Math.random()})` },
    tenant: extra.tenant ?? 'default',
    label: extra.label,
    batchId: extra.batchId,
  });
  if (status === 'QUEUED') return job;
  const now = engine.deps.clock.now();
  const workflow = engine.deps.workflows.get(job.workflow)!;
  const next: Job = {
    ...job,
    status,
    version: job.version + 1,
    updatedAt: now,
    ...(status === 'FAILED'
      ? {
          finishedAt: now,
          lastError: {
            step: job.step,
            kind: extra.kind ?? 'deadline',
            message: 'x',
            retryable: false,
            at: now,
          },
        }
      : {}),
    ...(status === 'CANCELLED' ? { finishedAt: now } : {}),
    ...(status === 'AWAITING_INPUT'
      ? {
          pending: {
            step: job.step,
            nextStep: workflow.steps[0]!.name,
            prompt: 'Choose',
            options: [
              { id: 'a', label: 'A', preselected: true },
              { id: 'b', label: 'B', preselected: false },
            ],
            min: 1,
            max: 2,
            offeredAt: now,
          },
        }
      : {}),
  };
  expect(await engine.deps.store.commit(next, job.version)).toBe(true);
  return next;
}

describe('bulk actions', () => {
  it('counts, digests and samples what a dry run selects, narrowed by every filter', async () => {
    for (let i = 0; i < 230; i++) await seed('FAILED', { label: i % 2 ? 'odd' : 'even' });
    await seed('FAILED', { tenant: 'lamps', kind: 'not-found' });
    await seed('CANCELLED');
    await seed('SUCCEEDED');
    await seed('QUEUED');
    const all = await previewBulk(engine.deps, request({ action: 'retry', dryRun: true }));
    expect(all).toMatchObject({ count: 232, statuses: ['FAILED', 'CANCELLED'], dryRun: true });
    expect(all.sample).toHaveLength(20);
    expect(all.selection).toMatch(/^[0-9a-f]{32}$/);
    const count = async (where: BulkRequestInput['where'], action: BulkRequestInput['action'] = 'retry') =>
      (await previewBulk(engine.deps, request({ action, where, dryRun: true }))).count;
    expect(await count({ tenant: 'lamps' })).toBe(1);
    expect(await count({ failureKind: 'not-found' })).toBe(1);
    expect(await count({ failureKind: 'deadline', label: 'ODD' })).toBe(115);
    expect(await count({ status: ['CANCELLED'] })).toBe(1);
    expect(await count({ status: ['RUNNING'] })).toBe(0);
    expect(await count({ workflow: 'llm-chat' })).toBe(0);
    expect(await count({ createdAfter: '2999-01-01' })).toBe(0);
    expect(await count({ createdBefore: new Date().toISOString().slice(0, 10) })).toBe(232);
    expect(await count({}, 'cancel')).toBe(1);
    // redrive acts on items of batches only.
    expect(await count({}, 'redrive')).toBe(0);
  });

  it('refuses a real call without a dry run, options that do not fit the action, and a bad filter', () => {
    const refused = (input: unknown) => {
      const parsed = bulkRequestSchema.safeParse(input);
      expect(parsed.success).toBe(false);
      return parsed.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    };
    expect(refused({ action: 'retry' })).toMatch(
      /confirm: a bulk action runs only on what a dry run counted/,
    );
    expect(refused({ action: 'cancel', dryRun: true, options: { fromStart: true } })).toMatch(
      /options.fromStart: goes with retry or redrive/,
    );
    expect(refused({ action: 'answer', dryRun: true })).toMatch(/options.selected: answer needs either/);
    expect(refused({ action: 'retry', dryRun: true, where: { status: ['LOST'] } })).toMatch(/where.status/);
    expect(refused({ action: 'retry', dryRun: true, where: { createdAfter: 'yesterday' } })).toMatch(
      /must be a date/,
    );
    expect(refused({ action: 'purge', dryRun: true })).toMatch(/action/);
  });

  it('acts on the confirmed set page by page, each job once, and refuses a set that changed', async () => {
    const seeded: Job[] = [];
    for (let i = 0; i < 120; i++) seeded.push(await seed('FAILED'));
    const dry = await previewBulk(
      engine.deps,
      request({ action: 'retry', dryRun: true, options: { deadlineMs: 3_600_000 } }),
    );
    await seed('FAILED');
    const changed = await runBulk(
      engine.deps,
      request({
        action: 'retry',
        options: { deadlineMs: 3_600_000 },
        confirm: { count: dry.count, selection: dry.selection },
      }),
    ).catch((error: unknown) => error);
    expect(changed).toBeInstanceOf(BulkSelectionChanged);
    expect((changed as BulkSelectionChanged).preview.count).toBe(121);
    expect((changed as Error).message).toMatch(/121 jobs match now \(the dry run counted 120\)/);

    const again = await previewBulk(
      engine.deps,
      request({ action: 'retry', dryRun: true, options: { deadlineMs: 3_600_000 } }),
    );
    const done = await runBulk(
      engine.deps,
      request({
        action: 'retry',
        options: { deadlineMs: 3_600_000 },
        confirm: { count: again.count, selection: again.selection },
      }),
    );
    expect(done).toMatchObject({ count: 121, done: 121, skipped: 0 });
    expect(done.cursor).toBeUndefined();
    for (const job of seeded) {
      const now = (await engine.deps.store.get(job.id))!;
      expect(now.status).toBe('QUEUED');
      expect(now.runs).toHaveLength(1);
      expect(now.deadlineAt - now.updatedAt).toBe(3_600_000);
    }
    expect((await previewBulk(engine.deps, request({ action: 'retry', dryRun: true }))).count).toBe(0);
  });

  it('stops at its time budget with a cursor that goes on only for the same request', async () => {
    for (let i = 0; i < 120; i++) await seed('QUEUED');
    const dry = await previewBulk(engine.deps, request({ action: 'cancel', dryRun: true }));
    const confirm = { count: dry.count, selection: dry.selection };
    const first = await runBulk(engine.deps, request({ action: 'cancel', confirm }), { budgetMs: 0 });
    expect(first).toMatchObject({ done: 50, skipped: 0 });
    expect(first.cursor).toBeDefined();
    await expect(
      runBulk(engine.deps, request({ action: 'cancel', where: { tenant: 'x' }, cursor: first.cursor })),
    ).rejects.toThrow(/cursor: belongs to another bulk request/);
    await expect(runBulk(engine.deps, request({ action: 'cancel', cursor: 'b.nonsense' }))).rejects.toThrow(
      /cursor: is not a cursor/,
    );
    let outcome = first;
    while (outcome.cursor)
      outcome = await runBulk(engine.deps, request({ action: 'cancel', cursor: outcome.cursor }));
    expect(outcome).toMatchObject({ count: 120, done: 120, skipped: 0 });
    expect((await previewBulk(engine.deps, request({ action: 'cancel', dryRun: true }))).count).toBe(0);
  });

  it('two runs at once act on each job once; the other skips it, saying why', async () => {
    for (let i = 0; i < 60; i++) await seed('FAILED');
    const dry = await previewBulk(engine.deps, request({ action: 'retry', dryRun: true }));
    const confirm = { count: dry.count, selection: dry.selection };
    const [a, b] = await Promise.all([
      runBulk(engine.deps, request({ action: 'retry', confirm })),
      runBulk(engine.deps, request({ action: 'retry', confirm })),
    ]);
    expect(a.done + b.done).toBe(60);
    for (const { reason } of [...a.skippedSample, ...b.skippedSample])
      expect(reason).toMatch(/changed since it was selected|changed while retrying|cannot be retried/);
    const runs = await Promise.all(
      dry.sample.map(async (job) => (await engine.deps.store.get(job.id))!.runs?.length),
    );
    expect(runs.every((count) => count === 1)).toBe(true);
  });

  it('answers every waiting job with its defaults or the ids given; one not offering them is skipped', async () => {
    const waiting = [await seed('AWAITING_INPUT'), await seed('AWAITING_INPUT')];
    const byDefaults = await previewBulk(
      engine.deps,
      request({ action: 'answer', dryRun: true, options: { take: 'defaults' } }),
    );
    expect(byDefaults.sample[0]!.options).toEqual(['a', 'b']);
    expect(byDefaults.sample[0]!.optionLabels).toEqual(['A', 'B']);
    const first = await runBulk(
      engine.deps,
      request({
        action: 'answer',
        options: { take: 'defaults' },
        confirm: { count: 2, selection: byDefaults.selection },
        where: { status: ['AWAITING_INPUT'] },
      }),
    );
    expect(first).toMatchObject({ done: 2, skipped: 0 });
    expect((await engine.deps.store.get(waiting[0]!.id))!.selections).toEqual({ [waiting[0]!.step]: ['a'] });

    const more = [await seed('AWAITING_INPUT'), await seed('AWAITING_INPUT')];
    const dry = await previewBulk(
      engine.deps,
      request({ action: 'answer', dryRun: true, options: { selected: ['b', 'z'] } }),
    );
    const second = await runBulk(
      engine.deps,
      request({
        action: 'answer',
        options: { selected: ['b', 'z'] },
        confirm: { count: dry.count, selection: dry.selection },
      }),
    );
    expect(second).toMatchObject({ done: 0, skipped: 2 });
    expect(second.skippedSample[0]!.reason).toMatch(/not among the options offered: z/);
    expect((await engine.deps.store.get(more[0]!.id))!.status).toBe('AWAITING_INPUT');
  });
});

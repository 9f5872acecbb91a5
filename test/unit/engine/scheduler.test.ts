/**
 * The scheduler's ordering rules (issue 10), on a fake clock with in-memory ports: no timing.
 * - with room in the budget, polls due later are pulled forward, most likely done first, jobs
 *   nearer the end first on a tie, no more than the spare calls;
 * - saturated, nothing is pulled, but a poll scheduled on a stale estimate is re-aimed;
 * - an operation nothing is known of is probed one job at a time;
 * - calls that advance a job reserve their place in line farther ahead than speculative polls,
 *   which reserve farther than new jobs' first calls.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { InMemoryRateLimiter, openLocalDatabase, SqliteJobStore } from '../../../shared/backends/local';
import {
  advance,
  BudgetFiller,
  type DurationSketch,
  defineWorkflow,
  emptySketch,
  type Job,
  type JobStore,
  type PollStatsStore,
  planFill,
  pollStatsKey,
  recordDuration,
  reserveHorizonMs,
  stepsFor,
  type Workflow,
  waitPriority,
} from '../../../shared/engine';
import { makeJob } from '../../support/factories';
import { demo, harness } from './fixtures';

const now = 1_000_000;
const pollOp = 'ai33-2Step2V3';

const input = z.object({ issue: z.string() });
const step = stepsFor('two-polls', input);
const running = (data: { status?: string }) =>
  data.status === 'RUNNING' ? ({ type: 'poll' } as const) : ({ type: 'next' } as const);
/** Two polled steps of the same operation: one early in the workflow, one at its end. */
const twoPolls = defineWorkflow({
  name: 'two-polls',
  version: 1,
  description: 'create, poll, submit, poll',
  input,
  steps: [
    step.call({
      name: 'create',
      operation: 'ai33-1Step1V3',
      request: () => ({ lang: 'en' as const, solution_issues: 'x' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'early',
      operation: pollOp,
      poll: { firstDelayMs: 10_000, factor: 2, maxDelayMs: 40_000, giveUpAfterMs: 600_000 },
      request: () => ({ task_id: 't' }),
      decide: running,
    }),
    step.call({
      name: 'submit',
      operation: 'ai33-3Step3SubmitV3',
      request: () => ({ lang: 'en' as const, task_id: 't' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'late',
      operation: pollOp,
      poll: { firstDelayMs: 10_000, factor: 2, maxDelayMs: 40_000, giveUpAfterMs: 600_000 },
      request: () => ({ task_id: 't' }),
      decide: (data: { status?: string }) =>
        data.status === 'RUNNING' ? { type: 'poll' } : { type: 'complete' },
    }),
  ],
  report: () => ({ title: 't', markdown: '' }),
}) as Workflow;

const workflows = new Map<string, Workflow>([
  [demo.name, demo],
  [twoPolls.name, twoPolls],
]);

/** A job waiting for the next poll of its task, started `elapsedMs` ago and due in `dueInMs`. */
const waiting = (id: string, elapsedMs: number, dueInMs: number, overrides: Partial<Job> = {}): Job =>
  makeJob({
    id,
    workflow: 'demo',
    status: 'WAITING',
    step: 'recommend',
    version: 5,
    input: { inline: { issue: 'x' } },
    pollStartedAt: now - elapsedMs,
    nextRunAt: now + dueInMs,
    deadlineAt: now + 3_600_000,
    createdAt: now - 60_000,
    updatedAt: now - elapsedMs,
    ...overrides,
  });

/** Tasks of the operation took exactly these times (ms). */
function sketchOf(durations: number[]): DurationSketch {
  let sketch = emptySketch(0);
  for (const ms of durations) sketch = recordDuration(sketch, ms, ms, 0);
  return sketch;
}
/** Tasks take 1.0 to 3.0 s, evenly. */
const learned = sketchOf(Array.from({ length: 40 }, (_, i) => 1_000 + (i % 20) * 100));

const roomy = { tokens: 1, ratePerSecond: 5 };
const plan = (jobs: Job[], options: Partial<Parameters<typeof planFill>[0]> = {}) =>
  planFill({
    now,
    jobs,
    workflows,
    budget: roomy,
    sketchOf: () => learned,
    reaimQuantile: 0.9,
    ...options,
  }).moves;

describe('planFill', () => {
  it('pulls forward the polls most likely done first, no more than the budget has spare', () => {
    // Spare: 1 token + 5/s over 1 s, minus the one job due within the window = 5 calls.
    const jobs = [
      waiting('due', 500, 200),
      waiting('at-1.2s', 1_200, 9_000),
      waiting('at-2.9s', 2_900, 9_000),
      waiting('at-2.3s', 2_300, 9_000),
      waiting('at-2.5s', 2_500, 9_000),
      waiting('at-2.4s', 2_400, 9_000),
      waiting('at-2.7s', 2_700, 9_000),
      waiting('at-2.8s', 2_800, 9_000),
    ];
    const moves = plan(jobs, { options: { reaimMarginMs: 60_000 } });
    expect(moves.map((move) => move.jobId)).toEqual(['at-2.9s', 'at-2.8s', 'at-2.7s', 'at-2.5s', 'at-2.4s']);
    expect(moves.every((move) => move.why === 'pull-forward' && move.at === now)).toBe(true);
  });

  it('does not pull a poll unlikely to find its task done', () => {
    expect(plan([waiting('young', 1_100, 9_000)], { options: { reaimMarginMs: 60_000 } })).toEqual([]);
  });

  it('pulls the job nearer the end first when both are as likely done', () => {
    const early = waiting('early', 2_500, 9_000, { workflow: 'two-polls', step: 'early' });
    const late = waiting('late', 2_500, 9_000, { workflow: 'two-polls', step: 'late' });
    // One spare call: 5/s over 1 s, minus four jobs due now.
    const due = [1, 2, 3, 4].map((i) => waiting(`due-${i}`, 100, 0));
    const moves = plan([early, late, ...due], {
      budget: { tokens: 0, ratePerSecond: 5 },
      options: { reaimMarginMs: 60_000 },
    });
    expect(moves.map((move) => move.jobId)).toEqual(['late']);
  });

  it('pulls nothing while the budget is saturated, but re-aims a poll scheduled on a stale estimate', () => {
    const due = [1, 2, 3, 4, 5, 6].map((i) => waiting(`due-${i}`, 100, 0));
    // Scheduled 15 s after its start on the declared prior; the estimate says 1 to 3 s.
    const stale = waiting('stale', 1_000, 14_000);
    // Due about when the estimate aims it: left alone.
    const close = waiting('close', 1_000, 2_000);
    const moves = plan([...due, stale, close], {
      budget: { tokens: -2, ratePerSecond: 5 },
    });
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ jobId: 'stale', why: 're-aim' });
    // Aimed at the estimate's 0.9 quantile from the task's start (1 to 3 s): within 2.5 to 3.2 s.
    const fromStart = (moves[0]?.at ?? 0) - (now - 1_000);
    expect(fromStart).toBeGreaterThan(2_500);
    expect(fromStart).toBeLessThan(3_200);
  });

  it('leaves alone jobs with a call in flight, a reserved token, or an error being backed off', () => {
    const jobs = [
      waiting('in-flight', 2_900, 9_000, { inFlightSince: now - 10 }),
      waiting('reserved', 2_900, 9_000, { tokenAt: now + 9_000 }),
      waiting('backing-off', 2_900, 9_000, { attempts: 1 }),
      waiting('paused', 2_900, 9_000, {
        lastError: { step: 'recommend', kind: 'quota-exhausted', message: 'q', retryable: true, at: now - 5 },
      }),
      waiting('selecting', 2_900, 9_000, { status: 'AWAITING_INPUT' }),
    ];
    expect(plan(jobs)).toEqual([]);
  });

  it('probes an operation nothing is known of one job at a time, the one waiting longest', () => {
    const jobs = [waiting('a', 1_500, 14_000), waiting('b', 2_500, 14_000), waiting('c', 500, 14_000)];
    const first = plan(jobs, { sketchOf: () => undefined });
    expect(first).toEqual([{ jobId: 'b', version: 5, at: now, why: 'probe', operation: pollOp }]);
    // Probed just now: not again within a second.
    expect(plan(jobs, { sketchOf: () => undefined, probedAt: new Map([[pollOp, now - 300]]) })).toEqual([]);
  });

  it('thins out the probes of a long task: next after half its running time at the last look', () => {
    // Last looked at 20 s into its task: the next probe comes 10 s after that look, not 1 s.
    const long = (sinceLookMs: number) =>
      waiting('long', 20_000 + sinceLookMs, 60_000, { lastPolledAt: now - sinceLookMs, polls: 3 });
    expect(plan([long(2_000)], { sketchOf: () => undefined })).toEqual([]);
    expect(plan([long(9_000)], { sketchOf: () => undefined })).toEqual([]);
    expect(plan([long(10_000)], { sketchOf: () => undefined })).toEqual([
      { jobId: 'long', version: 5, at: now, why: 'probe', operation: pollOp },
    ]);
    // And says when it could next be moved, so an idle loop need not look before then.
    expect(
      planFill({
        now,
        jobs: [long(2_000)],
        workflows,
        budget: roomy,
        sketchOf: () => undefined,
        reaimQuantile: 0.9,
      }).nextChanceAt,
    ).toBe(now + 8_000);
  });
});

describe('advance: reschedule', () => {
  it('moves a job waiting for a poll (a new version), never past its deadline', () => {
    const job = waiting('j', 2_000, 9_000);
    const moved = advance(demo, job, { type: 'reschedule', at: now }, now, () => 0.5);
    expect(moved.job).toMatchObject({ nextRunAt: now, version: job.version + 1, updatedAt: now });
    expect(moved.delayMs).toBe(0);
    const capped = advance(
      demo,
      waiting('k', 2_000, 9_000, { deadlineAt: now + 500 }),
      { type: 'reschedule', at: now + 5_000 },
      now,
      () => 0.5,
    );
    expect(capped.job.nextRunAt).toBe(now + 500);
  });

  it('leaves a job with a call in flight unchanged', () => {
    const job = waiting('j', 2_000, 9_000, { inFlightSince: now - 5 });
    const moved = advance(demo, job, { type: 'reschedule', at: now }, now, () => 0.5);
    expect(moved.unchanged).toBe(true);
    expect(moved.job).toBe(job);
  });
});

describe('order of the calls while the budget is saturated', () => {
  const create = waiting('create', 0, 0, { status: 'RUNNING', step: 'create', pollStartedAt: undefined });
  const likely = waiting('likely', 2_900, 0);
  const speculative = waiting('speculative', 1_100, 0, { polls: 1, lastPolledAt: now - 100 });
  const fresh = waiting('fresh', 0, 0, { status: 'QUEUED', step: 'create', pollStartedAt: undefined });
  const recommend = demo.steps[1]!;
  const first = demo.steps[0]!;

  it('ranks calls that advance a job before speculative polls, and new jobs last', () => {
    const advancing = waitPriority(demo, likely, recommend, 0.95);
    const guess = waitPriority(demo, speculative, recommend, 0.05);
    expect(advancing).toBeLessThan(guess);
    expect(waitPriority(demo, create, first)).toBeLessThan(guess);
    expect(guess).toBeLessThan(waitPriority(demo, fresh, first));
    // The same poll without a learned estimate: speculative once it found its task running.
    expect(waitPriority(demo, speculative, recommend)).toBe(guess);
  });

  it('lets calls that advance a job take their place in line farther ahead', () => {
    const horizon = 15_000;
    const advancing = reserveHorizonMs(likely, horizon, waitPriority(demo, likely, recommend, 0.95));
    const guess = reserveHorizonMs(speculative, horizon, waitPriority(demo, speculative, recommend, 0.05));
    const newJob = reserveHorizonMs(fresh, horizon, waitPriority(demo, fresh, first));
    expect(advancing).toBeGreaterThan(guess);
    expect(guess).toBeGreaterThanOrEqual(newJob);
    expect(newJob).toBe(2_000);
    expect(reserveHorizonMs(likely, 0, 0)).toBe(0);
  });

  it('serves a likely-done poll before a speculative one that asked first', async () => {
    // Eight jobs already hold the next 4 s of a 2/s budget; then the speculative poll asks, then
    // the likely one: the likely one gets a token in line, the speculative one is sent back.
    const limiter = new InMemoryRateLimiter({ ratePerSecond: 2 });
    const bucket = 'k';
    for (let i = 0; i < 8; i++) await limiter.take(bucket, now, { reserveWithinMs: 15_000 });
    const guess = await limiter.take(bucket, now, {
      reserveWithinMs: reserveHorizonMs(
        speculative,
        15_000,
        waitPriority(demo, speculative, recommend, 0.05),
      ),
    });
    const advancing = await limiter.take(bucket, now, {
      reserveWithinMs: reserveHorizonMs(likely, 15_000, waitPriority(demo, likely, recommend, 0.95)),
    });
    expect(guess).toMatchObject({ granted: false });
    expect('reserved' in guess && guess.reserved).toBeFalsy();
    expect(advancing).toMatchObject({ granted: false, reserved: true });
  });
});

/** Learned timing in memory, as the SQLite table keeps it. */
class MemoryPollStats implements PollStatsStore {
  readonly sketches = new Map<string, DurationSketch>();
  async load(keys: readonly string[]) {
    return new Map(
      keys.flatMap((key) => (this.sketches.has(key) ? [[key, this.sketches.get(key)!] as const] : [])),
    );
  }
  async record(key: string, lowerMs: number, upperMs: number, at: number) {
    this.sketches.set(key, recordDuration(this.sketches.get(key) ?? emptySketch(at), lowerMs, upperMs, at));
  }
}

describe('BudgetFiller', () => {
  it('commits each move through advance() and sends the job a message for its new version', async () => {
    const stats = new MemoryPollStats();
    stats.sketches.set(pollStatsKey(undefined, pollOp), learned);
    const limiter = new InMemoryRateLimiter({ ratePerSecond: 5 });
    const h = harness(undefined, { rateLimiter: limiter, pollStats: stats });
    h.clock.current = now;
    // Likely done (2.3 s of 1-3 s tasks), due about at its aim: pulled into the spare budget.
    const likely = waiting('likely', 2_300, 1_100);
    // Scheduled 15 s after its start on the declared prior: re-aimed at the estimate.
    const stale = waiting('stale', 300, 14_700);
    // Not likely done yet, due about at its aim: left alone.
    const young = waiting('young', 300, 3_000);
    for (const job of [likely, stale, young]) await h.store.create(job);
    const round = await new BudgetFiller(h.deps).fill();
    expect(round).toMatchObject({ pulled: 1, probed: 0, reaimed: 1 });
    expect(await h.store.get('likely')).toMatchObject({ nextRunAt: now, version: likely.version + 1 });
    const reaimed = await h.store.get('stale');
    expect(reaimed?.version).toBe(stale.version + 1);
    expect(reaimed?.nextRunAt).toBeLessThan(now + 3_000);
    expect(await h.store.get('young')).toMatchObject({ nextRunAt: young.nextRunAt, version: young.version });
    expect(h.queue.sent).toContainEqual({
      message: { jobId: 'likely', version: likely.version + 1 },
      delayMs: 0,
    });
    expect(h.queue.sent.map((sent) => sent.message)).toContainEqual({
      jobId: 'stale',
      version: stale.version + 1,
    });
    expect(h.queue.sent).toHaveLength(2);
  });

  it("on SQLite plans on the store's slim views, and moves only a job still at the version it planned on", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-filler-'));
    const db = openLocalDatabase(join(dir, 'opflow.db'));
    try {
      const sqlite = new SqliteJobStore(db);
      const stats = new MemoryPollStats();
      stats.sketches.set(pollStatsKey(undefined, pollOp), learned);
      const likely = waiting('likely', 2_300, 1_100);
      const alsoLikely = waiting('also-likely', 2_500, 1_300);
      const stale = waiting('stale', 300, 14_700);
      const young = waiting('young', 300, 3_000);
      for (const job of [likely, alsoLikely, stale, young]) await sqlite.create(job);
      // Another process changes `also-likely` between the filler's scan and its move.
      let raced = false;
      const store: JobStore = {
        create: (job) => sqlite.create(job),
        get: (id) => sqlite.get(id),
        commit: (job, expected) => sqlite.commit(job, expected),
        listDue: (at, limit) => sqlite.listDue(at, limit),
        list: (query) => sqlite.list(query),
        findByIdempotencyKey: (tenant, key) => sqlite.findByIdempotencyKey(tenant, key),
        scanForFill: async (query) => {
          const scan = await sqlite.scanForFill(query);
          const current = (await sqlite.get('also-likely'))!;
          raced = await sqlite.commit(
            { ...current, version: current.version + 1, label: 'theirs' },
            current.version,
          );
          return scan;
        },
      };
      const h = harness(undefined, {
        store,
        rateLimiter: new InMemoryRateLimiter({ ratePerSecond: 5 }),
        pollStats: stats,
      });
      h.clock.current = now;
      const round = await new BudgetFiller(h.deps).fill();
      expect(raced).toBe(true);
      expect(round).toMatchObject({ pulled: 1, probed: 0, reaimed: 1 });
      expect(await sqlite.get('likely')).toMatchObject({ nextRunAt: now, version: likely.version + 1 });
      expect((await sqlite.get('stale'))?.nextRunAt).toBeLessThan(now + 3_000);
      expect(await sqlite.get('young')).toMatchObject({ nextRunAt: young.nextRunAt, version: young.version });
      // The other writer's change stands; the filler did not move the job it planned on.
      expect(await sqlite.get('also-likely')).toMatchObject({
        label: 'theirs',
        version: alsoLikely.version + 1,
        nextRunAt: alsoLikely.nextRunAt,
      });
      expect(h.queue.sent.map((sent) => sent.message.jobId).sort()).toEqual(['likely', 'stale']);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('moves nothing without learned timing (the declared schedules stand)', async () => {
    const h = harness(undefined, { rateLimiter: new InMemoryRateLimiter({ ratePerSecond: 5 }) });
    h.clock.current = now;
    await h.store.create(waiting('a', 2_800, 9_000));
    expect(await new BudgetFiller(h.deps).fill()).toMatchObject({ pulled: 0, probed: 0, reaimed: 0 });
    expect(h.queue.sent).toEqual([]);
  });
});

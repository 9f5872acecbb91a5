/**
 * The budget filler's ordering rules, on a fake clock with in-memory ports: no timing.
 * - with room in the budget, polls due later are pulled forward, most likely done first, jobs
 *   nearer the end first on a tie, no more than the spare calls;
 * - saturated, nothing is pulled, but a poll scheduled on a stale estimate is re-aimed;
 * - an operation nothing is known of is probed one job at a time;
 * - calls that advance a job reserve their place in line farther ahead than speculative polls,
 *   which reserve farther than new jobs' first calls;
 * - near the end of a key's work the order turns to longest remaining work first: new jobs are
 *   sent for and take their place in line, jobs with more steps left go first.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { openLocalDatabase, SqliteJobStore, SqliteRateLimiter } from '../../../../shared/backends/local';
import {
  advance,
  BudgetFiller,
  type DurationSketch,
  defaultPollAllowance,
  defineWorkflow,
  emptySketch,
  type FillScanQuery,
  type Job,
  type JobStore,
  keyFingerprint,
  type PollStatsStore,
  planFill,
  plannedPollAt,
  planOrder,
  pollStatsKey,
  pollsPerTask,
  recordDuration,
  reserveHorizonMs,
  sketchPlan,
  stepsFor,
  type Workflow,
  waitPriority,
} from '../../../../shared/engine';
import { makeJob } from '../../../support/factories';
import { demo, harness } from '../fixtures';

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

    ...options,
  }).moves;

/** Where a job's poll plan puts its next poll with nothing counted on its key (the critical allowance). */
const plannedFor = (job: Job, extraPriceMs = 0): number => {
  const pollPlan = sketchPlan(
    learned,
    { pollsPerTask: pollsPerTask(demo, defaultPollAllowance.critical) },
    extraPriceMs,
  );
  const startedAt = job.pollStartedAt ?? now;
  const runningAt = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
  return Math.max(now, startedAt + (plannedPollAt(pollPlan!, runningAt, now - startedAt) ?? 0));
};

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
    // Each to where its plan puts it: within the window.
    expect(
      moves.every((move) => move.why === 'pull-forward' && move.at >= now && move.at <= now + 1_000),
    ).toBe(true);
  });

  it('pulls a poll no earlier than its plan, and none whose plan is past the window', () => {
    // 1.1 s into a 1-3 s task: its plan's first poll is within the window, not now.
    const young = waiting('young', 1_100, 9_000);
    const moves = plan([young], { options: { reaimMarginMs: 60_000 } });
    expect(moves).toEqual([
      expect.objectContaining({ jobId: 'young', why: 'pull-forward', at: plannedFor(young) }),
    ]);
    expect(plannedFor(young)).toBeGreaterThan(now + 300);
    // Just started: its plan is past the window, and the margin keeps the schedule.
    expect(plan([waiting('new', 0, 9_000)], { options: { reaimMarginMs: 60_000 } })).toEqual([]);
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
    // Aimed at the upper part of the estimate from the task's start (1 to 3 s, smoothed by a bucket
    // of 20 %): within 2.2 to 3.2 s.
    const fromStart = (moves[0]?.at ?? 0) - (now - 1_000);
    expect(fromStart).toBeGreaterThan(2_200);
    expect(fromStart).toBeLessThan(3_200);
  });

  it('pulls the likely-done polls of a tenant owed calls by its share to now, even while saturated', () => {
    // Polls planned a minute and a half out at the saturated price; alpha is owed two calls.
    const alpha = (id: string, elapsedMs: number) => waiting(id, elapsedMs, 90_000, { tenant: 'alpha' });
    const jobs = [
      alpha('alpha-done', 5_000),
      alpha('alpha-likely', 2_600),
      alpha('alpha-done-too', 4_000),
      alpha('alpha-running', 300),
      waiting('beta-done', 5_000, 90_000, { tenant: 'beta' }),
    ];
    const saturated = { budget: { tokens: -40, ratePerSecond: 5 }, options: { reaimMarginMs: 600_000 } };
    expect(plan(jobs, saturated)).toEqual([]);
    const moves = plan(jobs, { ...saturated, owed: new Map([['alpha', 2]]) });
    expect(moves).toEqual([
      { jobId: 'alpha-done', version: 5, at: now, why: 'owed', operation: pollOp },
      { jobId: 'alpha-done-too', version: 5, at: now, why: 'owed', operation: pollOp },
    ]);
    // Owed more than it has likely done: the poll whose task is likely still running stays.
    const all = plan(jobs, { ...saturated, owed: new Map([['alpha', 10]]) });
    expect(all.map((move) => move.jobId)).toEqual(['alpha-done', 'alpha-done-too', 'alpha-likely']);
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
    const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 2 });
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

/** A test on a fresh SQLite database (the local store), removed afterwards. */
async function onSqlite(test: (sqlite: SqliteJobStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-filler-'));
  const db = openLocalDatabase(join(dir, 'opflow.db'));
  try {
    await test(new SqliteJobStore(db));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The SQLite store as the JobStore port, with some of its reads replaced (to watch or race them). */
function storeOver(sqlite: SqliteJobStore, reads: Partial<JobStore>): JobStore {
  return {
    create: (job) => sqlite.create(job),
    get: (id) => sqlite.get(id),
    commit: (job, expected) => sqlite.commit(job, expected),
    listDue: (at, limit) => sqlite.listDue(at, limit),
    list: (query) => sqlite.list(query),
    findByIdempotencyKey: (tenant, key) => sqlite.findByIdempotencyKey(tenant, key),
    ...reads,
  };
}

/** A harness on `store` whose poll timing has learned `learned` for the polled operation. */
function learnedHarness(store: JobStore, rateLimiter = SqliteRateLimiter.inMemory({ ratePerSecond: 5 })) {
  const pollStats = new MemoryPollStats();
  pollStats.sketches.set(pollStatsKey(undefined, pollOp), learned);
  return harness(undefined, { store, workflows, rateLimiter, pollStats });
}

describe('BudgetFiller', () => {
  it('commits each move through advance() and sends the job a message for its new version', async () => {
    const stats = new MemoryPollStats();
    stats.sketches.set(pollStatsKey(undefined, pollOp), learned);
    const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 5 });
    const h = harness(undefined, { rateLimiter: limiter, pollStats: stats });
    h.clock.current = now;
    // Likely done (2.3 s of 1-3 s tasks), due about at its aim: pulled into the spare budget.
    const likely = waiting('likely', 2_300, 1_100);
    // Scheduled 15 s after its start on the declared prior: re-aimed at the estimate.
    const stale = waiting('stale', 300, 14_700);
    // Just started, due later than its plan's first poll by more than the margin: re-aimed too.
    const young = waiting('young', 300, 3_000);
    for (const job of [likely, stale, young]) await h.store.create(job);
    const round = await new BudgetFiller(h.deps).fill();
    expect(round).toMatchObject({ pulled: 1, probed: 0, reaimed: 2 });
    expect(await h.store.get('likely')).toMatchObject({
      nextRunAt: plannedFor(likely),
      version: likely.version + 1,
    });
    const reaimed = await h.store.get('stale');
    expect(reaimed?.version).toBe(stale.version + 1);
    expect(reaimed?.nextRunAt).toBeLessThan(now + 3_000);
    expect(await h.store.get('young')).toMatchObject({
      nextRunAt: plannedFor(young),
      version: young.version + 1,
    });
    expect(h.queue.sent).toContainEqual({
      message: { jobId: 'likely', version: likely.version + 1 },
      delayMs: plannedFor(likely) - now,
    });
    expect(h.queue.sent.map((sent) => sent.message)).toContainEqual({
      jobId: 'stale',
      version: stale.version + 1,
    });
    expect(h.queue.sent).toHaveLength(3);
  });

  it("on SQLite plans on the store's slim views, and moves only a job still at the version it planned on", () =>
    onSqlite(async (sqlite) => {
      const likely = waiting('likely', 2_300, 1_100);
      const alsoLikely = waiting('also-likely', 2_500, 1_300);
      const stale = waiting('stale', 300, 14_700);
      const young = waiting('young', 300, 3_000);
      for (const job of [likely, alsoLikely, stale, young]) await sqlite.create(job);
      // Another process changes `also-likely` between the filler's scan and its move.
      let raced = false;
      const store = storeOver(sqlite, {
        scanForFill: async (query) => {
          const scan = await sqlite.scanForFill(query);
          const current = (await sqlite.get('also-likely'))!;
          raced = await sqlite.commit(
            { ...current, version: current.version + 1, label: 'theirs' },
            current.version,
          );
          return scan;
        },
      });
      const h = learnedHarness(store);
      h.clock.current = now;
      const round = await new BudgetFiller(h.deps).fill();
      expect(raced).toBe(true);
      expect(round).toMatchObject({ pulled: 1, probed: 0, reaimed: 2 });
      expect(await sqlite.get('likely')).toMatchObject({
        nextRunAt: plannedFor(likely),
        version: likely.version + 1,
      });
      expect((await sqlite.get('stale'))?.nextRunAt).toBeLessThan(now + 3_000);
      expect(await sqlite.get('young')).toMatchObject({
        nextRunAt: plannedFor(young),
        version: young.version + 1,
      });
      // The other writer's change stands; the filler did not move the job it planned on.
      expect(await sqlite.get('also-likely')).toMatchObject({
        label: 'theirs',
        version: alsoLikely.version + 1,
        nextRunAt: alsoLikely.nextRunAt,
      });
      expect(h.queue.sent.map((sent) => sent.message.jobId).sort()).toEqual(['likely', 'stale', 'young']);
    }));

  it('on SQLite with the budget full reads only the polls a re-aim can move, and moves what a plan on all of them would', () =>
    onSqlite(async (sqlite) => {
      const queries: FillScanQuery[] = [];
      const read: string[][] = [];
      const store = storeOver(sqlite, {
        countForFill: (query) => sqlite.countForFill(query),
        scanForFill: async (query) => {
          queries.push(query);
          const scan = await sqlite.scanForFill(query);
          read.push(scan.waiting.map((view) => view.id));
          return scan;
        },
      });
      const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 5 });
      const h = learnedHarness(store, limiter);
      h.clock.current = now;
      // Twelve new jobs due now: more than the budget's 1 s (its burst and refill), so it is full.
      for (let i = 0; i < 12; i++)
        await sqlite.create(makeJob({ id: `new-${i}`, workflow: 'demo', nextRunAt: now - 1_000 }));
      const jobs = [
        waiting('stale', 300, 14_700), // on the declared prior: re-aimed
        waiting('far', 0, 60_000), // the same, just started
        waiting('young', 300, 3_000), // aimed about right: stays
        waiting('likely', 2_300, 1_100), // likely done, but there is no room to pull it
        waiting('polled', 1_500, 1_300, { lastPolledAt: now - 100 }), // found running, aimed about right: stays
        waiting('reserved', 300, 14_700, { tokenAt: now + 14_700 }), // holds a token: stays
      ];
      for (const job of jobs) await sqlite.create(job);
      // What a plan on every waiting job would move, for the same budget and demand.
      const all = await sqlite.scanForFill({
        dueBy: now + 1_000,
        until: now + 600_000,
        limit: 1_000,
        countUpTo: 200,
      });
      const expected = planFill({
        now,
        jobs: all.waiting,
        dueSoon: 12,
        workflows: h.deps.workflows,
        budget: await limiter.budget(keyFingerprint('sk-test-key'), now),
        sketchOf: () => learned,
      }).moves.map((move) => move.jobId);
      expect(expected).toEqual(expect.arrayContaining(['far', 'stale']));
      expect(expected).not.toContain('reserved');

      const round = await new BudgetFiller(h.deps).fill();
      expect(round).toMatchObject({ pulled: 0, probed: 0, reaimed: expected.length });
      expect(h.queue.sent.map((sent) => sent.message.jobId).sort()).toEqual(expected.sort());
      // One read, of the polls scheduled later than the earliest saturated plan from their start
      // (the critical allowance, one token interval of the key's rate added) plus the margin.
      const rate = (await limiter.budget(keyFingerprint('sk-test-key'), now)).ratePerSecond;
      const pollPlan = sketchPlan(
        learned,
        { pollsPerTask: pollsPerTask(demo, defaultPollAllowance.critical) },
        1000 / rate,
      );
      const aim = plannedPollAt(pollPlan!, 0, 0)!;
      expect(queries).toEqual([
        expect.objectContaining({
          countUpTo: 0,
          later: [{ workflow: 'demo', step: 'recommend', laterThanMs: aim + 1_000 - 1 }],
        }),
      ]);
      // Every job the plan moves was read (and the one holding a token, scheduled late as well).
      expect(read[0]).toEqual(expect.arrayContaining([...expected, 'reserved']));

      // The new jobs are done: the budget has room, every waiting job is read, the likely one pulled.
      for (let i = 0; i < 12; i++) {
        const job = (await sqlite.get(`new-${i}`))!;
        await sqlite.commit({ ...job, version: job.version + 1, status: 'SUCCEEDED' }, job.version);
      }
      h.clock.current = now + 10;
      // Every waiting job after the window is read (those moved into it by the first round are due).
      const dueAfter = (await Promise.all(jobs.map((job) => sqlite.get(job.id)))).filter(
        (job) => job !== undefined && job.nextRunAt > now + 10 + 1_000,
      );
      const roomyRound = await new BudgetFiller(h.deps).fill();
      expect(queries[1]?.later).toBeUndefined();
      expect(read[1]?.sort()).toEqual(dueAfter.map((job) => job?.id).sort());
      expect(roomyRound.pulled + roomyRound.reaimed).toBeGreaterThanOrEqual(0);
      expect(h.queue.sent.map((sent) => sent.message.jobId)).toContain('likely');
    }));

  it('moves nothing without learned timing (the declared schedules stand)', async () => {
    const h = harness(undefined, { rateLimiter: SqliteRateLimiter.inMemory({ ratePerSecond: 5 }) });
    h.clock.current = now;
    await h.store.create(waiting('a', 2_800, 9_000));
    expect(await new BudgetFiller(h.deps).fill()).toMatchObject({ pulled: 0, probed: 0, reaimed: 0 });
    expect(h.queue.sent).toEqual([]);
  });
});

describe('order near the end of a key’s work (longest remaining work first)', () => {
  // two-polls: create, early (polled), submit, late (polled): 4 calls and 2 tasks from the start.
  const taskMs = () => 2_000;
  const order = (work: { step: string; status: Job['status']; count: number }[], learnedTimes = true) =>
    planOrder({
      work: work.map((group) => ({ workflow: 'two-polls', ...group })),
      workflows,
      ratePerSecond: 5,
      taskMs: learnedTimes ? taskMs : () => undefined,
      slack: 1.5,
    });

  it('finishes jobs first while the calls left outlast the longest chain, then turns', () => {
    // A new job's chain: 4 calls at 5/s (0.8 s) and 2 tasks of 2 s = 4.8 s; times 1.5 = 7.2 s.
    const backlog = order([
      { step: 'create', status: 'QUEUED', count: 10 },
      { step: 'late', status: 'WAITING', count: 5 },
    ]);
    expect(backlog).toMatchObject({
      order: 'finish-first',
      callsLeft: 45,
      drainMs: 9_000,
      longestChainMs: 4_800,
    });
    const end = order([
      { step: 'create', status: 'QUEUED', count: 2 },
      { step: 'late', status: 'WAITING', count: 5 },
    ]);
    expect(end).toMatchObject({
      order: 'longest-first',
      callsLeft: 13,
      drainMs: 2_600,
      longestChainMs: 4_800,
    });
    // Jobs at their last step only: their chains are short, the order stays.
    expect(order([{ step: 'late', status: 'WAITING', count: 40 }]).order).toBe('finish-first');
  });

  it('turns, by default, once the drain no longer holds the longest chain and the expected longest of n after it', () => {
    const derived = (work: { step: string; status: Job['status']; count: number }[], sdMs: number) =>
      planOrder({
        work: work.map((group) => ({ workflow: 'two-polls', ...group })),
        workflows,
        ratePerSecond: 5,
        taskMs,
        taskSd: () => sdMs,
      });
    // A new job's chain 4.8 s; 13 new jobs: 10.4 s of calls.
    const thirteen = [{ step: 'create', status: 'QUEUED' as const, count: 13 }];
    // Without spread the turn is at 2 chains (9.6 s): not yet.
    expect(derived(thirteen, 0)).toMatchObject({
      order: 'finish-first',
      drainMs: 10_400,
      longestChainMs: 4_800,
    });
    // A wide spread puts the longest of 13 chains far above the mean: the order turns earlier.
    const wide = derived(thirteen, 2_000);
    expect(wide.order).toBe('longest-first');
    expect(wide.endMs).toBeGreaterThan(4_800 + 2_000);
    expect(derived([{ step: 'create', status: 'QUEUED', count: 12 }], 0).order).toBe('longest-first');
  });

  it('estimates the chains with the declared first delays until the tasks are learned', () => {
    // Declared: 10 s a task, so 10 new jobs (8 s of calls) are already the end of the work.
    const plan = order([{ step: 'create', status: 'QUEUED', count: 10 }], false);
    expect(plan).toMatchObject({ order: 'longest-first', longestChainMs: 20_800 });
  });

  it('counts one call per step left, the download not counted, and nothing for unknown workflows', () => {
    const plan = planOrder({
      work: [
        { workflow: 'demo', step: 'create', status: 'QUEUED', count: 3 },
        { workflow: 'demo', step: 'submit', status: 'RUNNING', count: 1 },
        { workflow: 'gone', step: 'x', status: 'WAITING', count: 50 },
      ],
      workflows,
      ratePerSecond: 2,
      taskMs: () => 1_000,
      slack: 0,
    });
    expect(plan).toMatchObject({ order: 'finish-first', callsLeft: 3 * 3 + 1, drainMs: 5_000 });
  });

  const at = (
    id: string,
    stepName: string,
    status: Job['status'] = 'WAITING',
    overrides: Partial<Job> = {},
  ) =>
    waiting(id, 2_900, 0, {
      workflow: 'two-polls',
      step: stepName,
      status,
      ...(status === 'QUEUED' ? { pollStartedAt: undefined, version: 1 } : {}),
      ...overrides,
    });
  const steps = twoPolls.steps;
  const [createStep, earlyStep, , lateStep] = [steps[0]!, steps[1]!, steps[2]!, steps[3]!];

  it('ranks new jobs first and jobs with more steps left before those with fewer', () => {
    const fresh = at('fresh', 'create', 'QUEUED');
    const early = at('early', 'early');
    const late = at('late', 'late');
    const longest = (job: Job, s: typeof createStep) => waitPriority(twoPolls, job, s, 0.95, 'longest-first');
    expect(longest(fresh, createStep)).toBe(0);
    expect(longest(fresh, createStep)).toBeLessThan(longest(early, earlyStep));
    expect(longest(early, earlyStep)).toBeLessThan(longest(late, lateStep));
    // The default order is the other way round.
    const finish = (job: Job, s: typeof createStep) => waitPriority(twoPolls, job, s, 0.95);
    expect(finish(late, lateStep)).toBeLessThan(finish(early, earlyStep));
    expect(finish(early, earlyStep)).toBeLessThan(finish(fresh, createStep));
    // A speculative poll still stands back behind a likely-done one of the same step.
    expect(waitPriority(twoPolls, early, earlyStep, 0.05, 'longest-first')).toBeGreaterThan(
      longest(early, earlyStep),
    );
  });

  it("gives a new job's first call the full horizon, so it takes its place in a long line", async () => {
    const fresh = at('fresh', 'create', 'QUEUED');
    const horizon = 15_000;
    expect(reserveHorizonMs(fresh, horizon, waitPriority(twoPolls, fresh, createStep))).toBe(2_000);
    const endgame = reserveHorizonMs(
      fresh,
      horizon,
      waitPriority(twoPolls, fresh, createStep, undefined, 'longest-first'),
      'longest-first',
    );
    expect(endgame).toBe(horizon);
    // Eight calls hold the next 4 s of a 2/s budget: sent back by default, in line near the end.
    const line = async (reserveWithinMs: number) => {
      const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 2 });
      for (let i = 0; i < 8; i++) await limiter.take('k', now, { reserveWithinMs: 15_000 });
      return limiter.take('k', now, { reserveWithinMs });
    };
    expect(await line(2_000)).not.toMatchObject({ reserved: true });
    expect(await line(endgame)).toMatchObject({ granted: false, reserved: true });
  });

  it('BudgetFiller on SQLite: turns the order after two counts agree, and sends for the new jobs once', () =>
    onSqlite(async (store) => {
      const h = learnedHarness(store);
      h.clock.current = now;
      // Two new jobs (sent back earlier, so their messages come late) and five at their last poll.
      for (const id of ['q1', 'q2'])
        await store.create(at(id, 'create', 'QUEUED', { nextRunAt: now - 5_000 }));
      for (let i = 0; i < 5; i++)
        await store.create(at(`w${i}`, 'late', 'WAITING', { nextRunAt: now + 60_000 }));
      const filler = new BudgetFiller(h.deps, { endgameSlack: 1.5, workEveryMs: 2_000 });
      const bucket = keyFingerprint('sk-test-key');
      const admittedOf = (sent: typeof h.queue.sent) =>
        sent.filter((s) => s.message.jobId.startsWith('q')).map((s) => [s.message.jobId, s.delayMs]);

      expect((await filler.fill()).admitted).toBe(0);
      // One count says longest-first; the order holds until a second one agrees.
      expect(filler.orderOf(bucket)).toBe('finish-first');
      expect(filler.orders().get(bucket)).toMatchObject({ planned: 'longest-first', callsLeft: 13 });
      h.clock.current = now + 1_000;
      expect((await filler.fill()).admitted).toBe(0); // not counted again within 2 s
      h.clock.current = now + 2_000;
      expect((await filler.fill()).admitted).toBe(2);
      expect(filler.orderOf(bucket)).toBe('longest-first');
      expect(filler.orders().get(bucket)?.since).toBe(now + 2_000);
      expect(admittedOf(h.queue.sent)).toEqual([
        ['q1', 0],
        ['q2', 0],
      ]);
      // The same versions are not sent for again.
      h.clock.current = now + 4_000;
      expect((await filler.fill()).admitted).toBe(0);
      expect(admittedOf(h.queue.sent)).toHaveLength(2);
      // The runner reads the order through deps.callOrder.
      h.deps.callOrder = (b) => filler.orderOf(b);
      expect(h.deps.callOrder(bucket)).toBe('longest-first');
    }));

  it('BudgetFiller counts a key whose first jobs came after the last count in the next round, once', () =>
    onSqlite(async (sqlite) => {
      const counted: number[] = [];
      const store = storeOver(sqlite, {
        scanWork: (query) => {
          counted.push(h.clock.current);
          return sqlite.scanWork(query);
        },
      });
      const h = learnedHarness(store);
      h.clock.current = now;
      const filler = new BudgetFiller(h.deps, { workEveryMs: 2_000 });
      await filler.fill(); // nothing to count yet
      for (let i = 0; i < 5; i++)
        await sqlite.create(at(`w${i}`, 'late', 'WAITING', { nextRunAt: now + 60_000 }));
      const bucket = keyFingerprint('sk-test-key');
      h.clock.current = now + 250;
      await filler.fill(); // finds the key's jobs uncounted
      expect(filler.orders().get(bucket)).toBeUndefined();
      h.clock.current = now + 500;
      await filler.fill();
      expect(filler.orders().get(bucket)).toMatchObject({ jobs: 5 });
      // Counted: back to every 2 s.
      h.clock.current = now + 750;
      await filler.fill();
      expect(counted).toEqual([now, now + 500]);
    }));

  it('BudgetFiller reads the new jobs only once a count says the order may turn', () =>
    onSqlite(async (sqlite) => {
      const asked: number[] = [];
      const store = storeOver(sqlite, {
        scanWork: (query) => {
          asked.push(query.queuedLimit);
          return sqlite.scanWork(query);
        },
      });
      const h = learnedHarness(store);
      h.clock.current = now;
      // A large backlog: finish-first, and the new jobs are not read.
      for (let i = 0; i < 40; i++) await sqlite.create(at(`q${i}`, 'create', 'QUEUED', { nextRunAt: now }));
      const filler = new BudgetFiller(h.deps, { endgameSlack: 1.5, workEveryMs: 2_000 });
      await filler.fill();
      h.clock.current = now + 2_000;
      await filler.fill();
      expect(asked).toEqual([0, 0]);
      // The backlog is nearly done: the first count that says longest-first reads none yet (the
      // order holds until a second agrees), the second reads them and sends for the last new job.
      for (let i = 1; i < 40; i++) {
        const job = (await sqlite.get(`q${i}`))!;
        expect(
          await sqlite.commit({ ...job, version: job.version + 1, status: 'SUCCEEDED' }, job.version),
        ).toBe(true);
      }
      h.clock.current = now + 4_000;
      expect((await filler.fill()).admitted).toBe(0);
      h.clock.current = now + 6_000;
      expect((await filler.fill()).admitted).toBe(1);
      expect(asked).toEqual([0, 0, 0, 1_000]);
      expect(h.queue.sent.map((sent) => sent.message.jobId)).toEqual(['q0']);
    }));

  it('BudgetFiller on SQLite: a large backlog keeps finishing jobs first and sends for none', () =>
    onSqlite(async (store) => {
      const h = learnedHarness(store);
      h.clock.current = now;
      for (let i = 0; i < 40; i++) await store.create(at(`q${i}`, 'create', 'QUEUED', { nextRunAt: now }));
      const filler = new BudgetFiller(h.deps);
      const bucket = keyFingerprint('sk-test-key');
      for (let round = 0; round < 3; round++) {
        h.clock.current = now + round * 2_000;
        expect((await filler.fill()).admitted).toBe(0);
      }
      expect(filler.orderOf(bucket)).toBe('finish-first');
      expect(filler.orders().get(bucket)).toMatchObject({ planned: 'finish-first', callsLeft: 160 });
      expect(h.queue.sent).toEqual([]);
    }));
});

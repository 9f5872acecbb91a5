// Admission on aws on DynamoDB Local: a job whose call finds no token within its horizon
// while the key's line is full is parked (committed without a message, in its key's WAIT# partition
// of the due index, out of the sweeper's DUE# shards); a release round reserves its token once the
// line has room and sends its one message, and two releasers at once release it once; the sweeper
// unparks the parked jobs of a key whose line has ended (a commit) and sends their messages, and the
// runner unparks a job it is sent at a parked version in a commit before anything else.

import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbJobStore, DynamoDbRateLimiter, migrateIndexKeys } from '../../../../shared/backends/aws';
import { maxCuts } from '../../../../shared/backends/aws/dynamodb-rate-lane';
import { submitJob } from '../../../../shared/engine';
import { nudgeParked } from '../../../../shared/engine/admission/nudge';
import { releaseParked } from '../../../../shared/engine/admission/release';
import { keyFingerprint, runStep } from '../../../../shared/engine/runner';
import { dynamoDbLocalForThisFile } from '../../../support/dynamodb-local';
import { REAL_PROCESS_TIMEOUT_MS } from '../../../support/timeouts';
import { happyScript, harness } from '../../../unit/engine/fixtures';

const dynamo = dynamoDbLocalForThisFile();

const bucket = keyFingerprint('sk-test-key');

async function world() {
  const { tableName, client } = await dynamo.newTable();
  const store = new DynamoDbJobStore({ client, tableName });
  const limiter = () => new DynamoDbRateLimiter({ client, tableName, ratePerSecond: 2 });
  const h = harness(happyScript(), { store, rateLimiter: limiter(), admission: true });
  return { h, store, limiter };
}

/** What the sweeper function builds (sweeper-runtime.ts): a store, a queue, a clock; no workflows. */
function sweeperDeps(h: Awaited<ReturnType<typeof world>>['h']) {
  return { store: h.deps.store, queue: h.deps.queue, clock: h.deps.clock };
}

/** Fills the key's line with `count` tokens reserved by other jobs (2 per second: count / 2 s long). */
async function fillLine(limiter: DynamoDbRateLimiter, now: number, count: number) {
  for (let i = 0; i < count; i++) {
    const decision = await limiter.take(bucket, now, { reserveWithinMs: 600_000 });
    expect(decision.granted || decision.reserved).toBe(true);
  }
}

/**
 * A table whose limiter keeps tenants' shares in its bucket item (every tenant weighs 1), a
 * harness on it, the key's line filled with 20 tokens no tenant owns (nothing to take over), and
 * `submit`, which starts a demo job for a tenant.
 */
async function sharesWorld() {
  const { tableName, client } = await dynamo.newTable();
  const store = new DynamoDbJobStore({ client, tableName });
  const limiter = new DynamoDbRateLimiter({ client, tableName, ratePerSecond: 2, shares: { tenants: {} } });
  const h = harness(happyScript(), { store, rateLimiter: limiter, admission: true });
  await fillLine(limiter, h.clock.now(), 20);
  const submit = async (tenant: string, issue: string) =>
    (await submitJob(h.deps, { workflow: 'demo', input: { issue }, tenant })).job;
  return { store, limiter, h, submit };
}

describe('admission on DynamoDB', () => {
  it(
    'parks a job that finds the line full, releases it once when its token comes, even to two releasers at once',
    async () => {
      const { h, store, limiter } = await world();
      const now = h.clock.now();
      await fillLine(h.deps.rateLimiter as DynamoDbRateLimiter, now, 20);
      const budget = await (h.deps.rateLimiter as DynamoDbRateLimiter).budget(bucket, now);
      expect(budget.tokens).toBeLessThan(-15);
      expect(budget.ratePerSecond).toBe(2);

      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'a hinge' } });
      // Its message comes 2 s late (a new job's first look right away is sent back once first:
      // see the next test).
      h.clock.advance(2_000);
      const first = h.queue.takeNext()!;
      const sentBefore = h.queue.sent.length;
      const report = await runStep(h.deps, first.message);
      expect(report).toMatchObject({ outcome: 'deferred', reason: 'rate-limited', parked: true });
      // No message: the job waits in its key's line of parked jobs, not in the sweeper's shards.
      expect(h.queue.sent.length).toBe(sentBefore);
      expect(h.client.calls).toHaveLength(0);
      const parked = (await store.get(job.id))!;
      expect(parked.parked).toEqual({ bucket, withinMs: 2_000 });
      expect(parked.version).toBe(job.version + 1);
      expect((await store.listDue(now + 60_000, 10)).map((j) => j.id)).not.toContain(job.id);
      expect(await store.listParked(bucket, now + 1_000, 10)).toEqual([
        { id: job.id, class: 'C', tenant: 'default', dueAt: parked.nextRunAt },
      ]);
      expect(await store.parkedBuckets()).toEqual([bucket]);

      // The line is still full: a round leaves the job parked and writes nothing to it.
      const early = await releaseParked(h.deps, store, bucket);
      expect(early).toMatchObject({ released: 0 });
      expect((await store.get(job.id))!.version).toBe(parked.version);

      // The line has drained: two releasers (separate limiters, as separate Lambda instances) at once.
      h.clock.advance(10_000);
      const rounds = await Promise.all([
        releaseParked({ ...h.deps, rateLimiter: limiter() }, store, bucket),
        releaseParked({ ...h.deps, rateLimiter: limiter() }, store, bucket),
      ]);
      expect(rounds.reduce((sum, round) => sum + round.released, 0)).toBe(1);
      const released = (await store.get(job.id))!;
      expect(released.parked).toBeUndefined();
      expect(released.version).toBe(parked.version + 1);
      expect(released.tokenAt).toBeGreaterThanOrEqual(h.clock.now());
      expect(released.nextRunAt).toBe(released.tokenAt);
      const sent = h.queue.sent.slice(sentBefore);
      expect(sent).toEqual([
        { message: { jobId: job.id, version: released.version }, delayMs: released.tokenAt! - h.clock.now() },
      ]);
      expect(await store.listParked(bucket, h.clock.now() + 60_000, 10)).toEqual([]);
      expect((await store.listDue(released.nextRunAt, 10)).map((j) => j.id)).toEqual([job.id]);

      // Its message runs the call on the reserved token: no second token, no second message first.
      h.queue.pending = [];
      h.clock.current = released.tokenAt!;
      const ran = await runStep(h.deps, { jobId: job.id, version: released.version });
      expect(ran.outcome).toBe('committed');
      expect(h.client.calls.map((call) => call.operationId)).toEqual(['ai33-1Step1V3']);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'hands a high job a token reserved near the front of the line, where a normal one is parked',
    async () => {
      const { h, store } = await world();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, h.clock.now(), 40);
      const normal = (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'routine' } })).job;
      const high = (
        await submitJob(h.deps, { workflow: 'demo', input: { issue: 'urgent' }, priority: 'high' })
      ).job;
      h.clock.advance(2_000);
      const now = h.clock.now();
      const reports = new Map<string, unknown>();
      for (const next of h.queue.pending.splice(0))
        reports.set(next.message.jobId, await runStep(h.deps, next.message));
      expect(reports.get(normal.id)).toMatchObject({ parked: true });
      // The high job waits for a token of the line's next second (SQS delays are whole seconds),
      // recorded in its job (this queue holds no tokens), with one message.
      expect(reports.get(high.id)).toMatchObject({ outcome: 'deferred', reserved: true, delayMs: 1_000 });
      expect((await store.get(high.id))!.tokenAt).toBe(now + 1_000);
      const held = h.queue.pending.find((entry) => entry.message.jobId === high.id)!.message;
      expect((await store.get(high.id))!.parked).toBeUndefined();
      // The token's holder, when its message comes, finds it gone; the high job spends it.
      expect(await limiter.stillHeld(bucket, now + 1_000, 'holder')).toBe(false);
      h.clock.current = now + 1_000;
      h.queue.pending = [];
      expect(await runStep(h.deps, held)).toMatchObject({ outcome: 'committed' });
      expect(h.client.calls).toHaveLength(1);
      // Its next call (a poll) cuts in near its due time in the same commit, where the line ends
      // 20 s after the fill: its token is one of the line's, taken over.
      const next = (await store.get(high.id))!;
      const lineEnd = now - 2_000 + 20_000;
      expect(next.tokenAt).toBeDefined();
      expect(next.tokenAt!).toBeLessThan(lineEnd - 5_000);
      expect(next.nextRunAt).toBe(next.tokenAt);
      expect(await limiter.stillHeld(bucket, next.tokenAt!, 'holder')).toBe(false);
      expect(await limiter.stillHeld(bucket, next.tokenAt!, high.id)).toBe(true);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "releases a parked high job first, in its own class before every other job's",
    async () => {
      const { h, store } = await world();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      // 40 tokens (20 s at 2/s), and one more for each cut-in the lane keeps (taken over below).
      await fillLine(limiter, h.clock.now(), 40 + maxCuts);
      // The key's lane remembers as many cut-ins as it keeps: a high job finds none to take.
      for (let i = 0; i < maxCuts; i++)
        expect(await limiter.cutIn(bucket, h.clock.now(), `earlier-${i}`)).toBeDefined();
      const normal = (await submitJob(h.deps, { workflow: 'demo', input: { issue: 'routine' } })).job;
      const high = (
        await submitJob(h.deps, { workflow: 'demo', input: { issue: 'urgent' }, priority: 'high' })
      ).job;
      // Both messages come 2 s late (not a first look) to a line 18 s long: both are parked, the high
      // job too (its horizon is 15 s).
      h.clock.advance(2_000);
      for (let next = h.queue.takeNext(); next; next = h.queue.takeNext())
        expect(await runStep(h.deps, next.message)).toMatchObject({ parked: true });
      expect((await store.get(high.id))!.parked).toEqual({ bucket, withinMs: 15_000 });
      const until = h.clock.now() + 60_000;
      expect(await store.listParked(bucket, until, 10)).toMatchObject([
        { id: high.id, class: '0', tenant: 'default' },
        { id: normal.id, class: 'C', tenant: 'default' },
      ]);
      // Once the line has ended, a round with room for one releases the high job, parked later.
      h.clock.advance(30_000 + maxCuts * 500);
      expect(await releaseParked(h.deps, store, bucket, { maxReleases: 1 })).toMatchObject({ released: 1 });
      expect((await store.get(high.id))!.parked).toBeUndefined();
      expect((await store.get(normal.id))!.parked).toBeDefined();
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "sends a new job's first look back once (a message, no write) when the line is full, and parks it when it returns to a full line",
    async () => {
      const { h, store } = await world();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, h.clock.now(), 20);
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'first look' } });
      const first = h.queue.takeNext()!;
      const bounced = await runStep(h.deps, first.message);
      expect(bounced).toMatchObject({ outcome: 'deferred', reason: 'rate-limited' });
      expect(bounced).not.toHaveProperty('parked');
      expect((await store.get(job.id))!.version).toBe(job.version);
      const back = h.queue.takeNext()!;
      expect(back.message).toEqual({ jobId: job.id, version: job.version });
      // It returns to a line that is full again (other jobs reserved meanwhile): parked now.
      h.clock.current = back.visibleAt;
      await fillLine(limiter, h.clock.now(), 20);
      expect(await runStep(h.deps, back.message)).toMatchObject({ parked: true });
      expect((await store.get(job.id))!.parked).toEqual({ bucket, withinMs: 2_000 });
      expect(h.client.calls).toHaveLength(0);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'on a queue whose messages hold tokens (SQS), books the sent-back first look its token at its return, and it calls then on a line full again',
    async () => {
      const { h, store } = await world();
      Object.defineProperty(h.queue, 'carriesTokens', { value: true });
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, h.clock.now(), 20);
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'first look' } });
      const bounced = await runStep(h.deps, h.queue.takeNext()!.message);
      expect(bounced).toMatchObject({ outcome: 'deferred', reason: 'rate-limited', reserved: true });
      // No write of the job; its one message holds the token booked for when it comes back, past
      // the 10 s line (the spread keeps new jobs behind it).
      expect((await store.get(job.id))!.version).toBe(job.version);
      const back = h.queue.takeNext()!;
      expect(back.message).toMatchObject({ jobId: job.id, version: job.version });
      const tokenAt = back.message.tokenAt!;
      expect(tokenAt).toBeGreaterThanOrEqual(h.clock.now() + 10_000);
      expect(back.visibleAt).toBe(tokenAt);
      // It returns to a line that other jobs filled meanwhile: its token is its own, so it calls.
      h.clock.current = back.visibleAt;
      await fillLine(limiter, h.clock.now(), 20);
      expect(await runStep(h.deps, back.message)).toMatchObject({ outcome: 'committed' });
      expect(h.client.calls).toHaveLength(1);
      expect((await store.get(job.id))!.parked).toBeUndefined();
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'releases calls that advance a job before new jobs, and a new job only within its 2 s horizon',
    async () => {
      const { h, store } = await world();
      const now = h.clock.now();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, now, 20);
      const fresh = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'new' } });
      const older = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'started' } });
      h.clock.advance(2_000);
      for (const message of [h.queue.takeNext()!, h.queue.takeNext()!])
        expect(await runStep(h.deps, message.message)).toMatchObject({ parked: true });
      // The second job is under way: its next call advances it (a 15 s horizon), parked after the new one.
      const started = (await store.get(older.job.id))!;
      const advancing = { ...started, status: 'WAITING' as const, version: started.version + 1 };
      advancing.parked = { bucket, withinMs: 15_000 };
      expect(await store.commit(advancing, started.version)).toBe(true);
      expect((await store.listParked(bucket, now + 1_000, 10)).map((p) => p.id)).toEqual([
        older.job.id,
        fresh.job.id,
      ]);
      // The line ends 10 s from now: only the advancing call is within its horizon.
      const round = await releaseParked(h.deps, store, bucket);
      expect(round.released).toBe(1);
      expect((await store.get(older.job.id))!.parked).toBeUndefined();
      expect((await store.get(fresh.job.id))!.parked).toBeDefined();
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'the sweeper unparks parked jobs only when their key has no line, once, with no stale message; the runner unparks before it calls',
    async () => {
      const { h, store } = await world();
      const now = h.clock.now();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, now, 20);
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'stranded' } });
      h.clock.advance(2_000);
      await runStep(h.deps, h.queue.takeNext()!.message);
      const parked = (await store.get(job.id))!;
      expect(parked.parked).toBeDefined();

      // The line reaches 10 s ahead: commits of the key are coming, each releasing; no nudge.
      expect(await store.lineEndsAt(bucket, h.clock.now())).toBeGreaterThan(now + 9_000);
      const sentBefore = h.queue.sent.length;
      expect(await nudgeParked(sweeperDeps(h), store)).toBe(0);
      // The line ended more than 30 s ago and nobody released the job (a lost round): the sweeper
      // unparks it in a commit at the version it read and sends its message at the new version.
      h.clock.advance(41_000);
      // A poll of a long task has booked its token five minutes ahead: a commit coming then, not
      // soon, so it does not hold the parked job back until then.
      const later = h.clock.now() + 300_000;
      expect(await limiter.reserveAhead(bucket, h.clock.now(), { at: later, withinMs: 15_000 })).toBe(later);
      expect(await store.lineEndsAt(bucket, h.clock.now())).toBeLessThan(h.clock.now() - 5_000);
      expect(await nudgeParked(sweeperDeps(h), store)).toBe(1);
      const nudge = h.queue.sent.slice(sentBefore);
      expect(nudge).toEqual([{ message: { jobId: job.id, version: parked.version + 1 }, delayMs: 0 }]);
      const unparked = (await store.get(job.id))!;
      expect(unparked.parked).toBeUndefined();
      expect(unparked.version).toBe(parked.version + 1);
      expect(await store.listParked(bucket, h.clock.now() + 60_000, 10)).toEqual([]);
      // A releaser that read the job before the sweeper's commit loses its own: no second message.
      const sentAfterNudge = h.queue.sent.length;
      expect(await store.commit({ ...parked, version: parked.version + 1 }, parked.version)).toBe(false);
      expect(await releaseParked(h.deps, store, bucket)).toMatchObject({ released: 0 });
      expect(h.queue.sent.length).toBe(sentAfterNudge);
      // A second sweep finds nothing parked: nothing sent twice.
      expect(await nudgeParked(sweeperDeps(h), store)).toBe(0);

      const runs = await runStep(h.deps, nudge[0]!.message);
      expect(runs.outcome).toBe('committed');
      const after = (await store.get(job.id))!;
      // Unparked by the sweeper, the create's intent, its outcome.
      expect(after.version).toBe(parked.version + 3);
      expect(h.client.calls).toHaveLength(1);

      // A nudge sent at a parked version (by the sweeper before this change, or an old message):
      // the runner unparks the job in a commit before anything else.
      const second = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'old nudge' } });
      h.queue.pending = [];
      await fillLine(limiter, h.clock.now(), 20);
      h.clock.advance(2_000);
      await runStep(h.deps, { jobId: second.job.id, version: second.job.version });
      const parkedAgain = (await store.get(second.job.id))!;
      expect(parkedAgain.parked).toBeDefined();
      h.clock.advance(60_000);
      const callsBefore = h.client.calls.length;
      expect(await runStep(h.deps, { jobId: second.job.id, version: parkedAgain.version })).toMatchObject({
        outcome: 'committed',
      });
      expect((await store.get(second.job.id))!.parked).toBeUndefined();
      expect(h.client.calls.length).toBe(callsBefore + 1);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'the sweeper sends a parked job of an idle key due minutes ahead for its due time, not a minute late',
    async () => {
      const { h, store } = await world();
      const limiter = h.deps.rateLimiter as DynamoDbRateLimiter;
      await fillLine(limiter, h.clock.now(), 20);
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'a later poll' } });
      // Parked in the commit that scheduled its next call, due 5 minutes ahead (as a poll whose
      // token could not be reserved while the line was full).
      const later = {
        ...job,
        version: job.version + 1,
        nextRunAt: h.clock.now() + 300_000,
        parked: { bucket, withinMs: 15_000 },
      };
      expect(await store.commit(later, job.version)).toBe(true);
      h.queue.pending = [];
      const sentBefore = h.queue.sent.length;
      // The line ended 6 s ago (past the 5 s grace): the job is sent for its due time at once.
      h.clock.advance(16_000);
      expect(await nudgeParked(sweeperDeps(h), store)).toBe(1);
      expect(h.queue.sent.slice(sentBefore)).toEqual([
        { message: { jobId: job.id, version: later.version + 1 }, delayMs: later.nextRunAt - h.clock.now() },
      ]);
      const unparked = (await store.get(job.id))!;
      expect(unparked.parked).toBeUndefined();
      expect(unparked.nextRunAt).toBe(later.nextRunAt);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "with shares kept in the bucket item, releases parked jobs in the order their tenants are owed tokens, and books no sent-back job's token",
    async () => {
      // A line no tenant owns (nothing to take over), then alpha's three jobs and gamma's one.
      const { store, limiter, h, submit } = await sharesWorld();
      const alpha = [await submit('alpha', 'a0'), await submit('alpha', 'a1'), await submit('alpha', 'a2')];
      h.clock.advance(1);
      const gamma = await submit('gamma', 'g0');
      h.clock.advance(2_000);
      for (let next = h.queue.takeNext(); next; next = h.queue.takeNext())
        expect(await runStep(h.deps, next.message)).toMatchObject({ parked: true });
      // In due order gamma's job comes last (submitted a millisecond later).
      const parked = (await store.listParked(bucket, h.clock.now() + 60_000, 12)).map((found) => found.id);
      expect(parked.at(-1)).toBe(gamma.id);
      // Once the line has ended, a round of two: alpha's soonest and gamma's (level: one each), not
      // alpha's two soonest.
      h.clock.advance(10_000);
      expect(await releaseParked(h.deps, store, bucket, { maxReleases: 2 })).toMatchObject({ released: 2 });
      const stillParked = async (id: string) => (await store.get(id))!.parked !== undefined;
      expect(await stillParked(parked[0]!)).toBe(false);
      expect(await stillParked(gamma.id)).toBe(false);
      expect(await stillParked(parked[1]!)).toBe(true);
      expect(await stillParked(parked[2]!)).toBe(true);
      expect(alpha.map((job) => job.id).sort()).toEqual(parked.slice(0, 3).sort());

      // On a queue whose messages hold tokens, a new job's first look sent back while alpha and
      // gamma both have work books no token (its booking would lie past the line's end, where no
      // tenant behind could take it over): its message holds none.
      Object.defineProperty(h.queue, 'carriesTokens', { value: true });
      h.queue.pending = [];
      await fillLine(limiter, h.clock.now(), 20);
      const late = await submit('alpha', 'a3');
      const bounced = await runStep(h.deps, h.queue.takeNext()!.message);
      expect(bounced).toMatchObject({ outcome: 'deferred', reason: 'rate-limited' });
      expect(bounced).not.toHaveProperty('reserved');
      const back = h.queue.takeNext()!;
      expect(back.message).toEqual({ jobId: late.id, version: late.version });
      expect(h.client.calls).toHaveLength(0);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'a release round reaches a tenant none of whose parked jobs is among the soonest dozen, without reading a job for its tenant',
    async () => {
      const { store, h, submit } = await sharesWorld();
      // alpha parks 13 jobs before gamma parks its one: in due order gamma's is the 14th.
      for (let i = 0; i < 13; i++) await submit('alpha', `a${i}`);
      h.clock.advance(1);
      const gamma = await submit('gamma', 'g0');
      h.clock.advance(2_000);
      for (let next = h.queue.takeNext(); next; next = h.queue.takeNext())
        expect(await runStep(h.deps, next.message)).toMatchObject({ parked: true });
      // Each tenant's soonest (at most 4 of each: a round's releases), merged in due order.
      const listed = await store.listParked(bucket, h.clock.now() + 60_000, 12, { perTenant: 4 });
      expect(listed.map((row) => row.tenant)).toEqual(['alpha', 'alpha', 'alpha', 'alpha', 'gamma']);
      expect(listed.at(-1)?.id).toBe(gamma.id);
      // The line ended: a round of two gives one to each (level), reading only the two jobs it sends.
      h.clock.advance(10_000);
      const reads: string[] = [];
      const get = store.get.bind(store);
      const counted = Object.assign(Object.create(store) as DynamoDbJobStore, {
        get: async (id: string) => {
          reads.push(id);
          return get(id);
        },
      });
      const round = await releaseParked({ ...h.deps, store: counted }, store, bucket, { maxReleases: 2 });
      expect(round).toMatchObject({ released: 2, lost: 0 });
      expect((await store.get(gamma.id))!.parked).toBeUndefined();
      expect(reads).toHaveLength(2);
      expect(reads).toContain(gamma.id);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "lists each tenant's soonest parked jobs whatever their names (one a prefix of others)",
    async () => {
      const { h, store } = await world();
      const byTenant: Record<string, string[]> = {};
      for (const [tenant, count] of [
        ['alpha', 3],
        ['al', 1],
        ['a.b', 2],
        ['al-x', 3],
      ] as const) {
        for (let i = 0; i < count; i++) {
          h.clock.advance(1);
          const { job } = await submitJob(h.deps, {
            workflow: 'demo',
            input: { issue: `${tenant} ${i}` },
            tenant,
          });
          const parked = { ...job, version: job.version + 1, parked: { bucket, withinMs: 2_000 } };
          expect(await store.commit(parked, job.version)).toBe(true);
          byTenant[tenant] = [...(byTenant[tenant] ?? []), job.id];
        }
      }
      const listed = await store.listParked(bucket, h.clock.now() + 1_000, 100, { perTenant: 2 });
      const got: Record<string, string[]> = {};
      for (const row of listed) got[row.tenant ?? '?'] = [...(got[row.tenant ?? '?'] ?? []), row.id];
      expect(got).toEqual({
        alpha: byTenant.alpha!.slice(0, 2),
        al: byTenant.al,
        'a.b': byTenant['a.b'],
        'al-x': byTenant['al-x']!.slice(0, 2),
      });
      // Merged in due order (the order they were submitted in).
      expect(listed.map((row) => row.dueAt)).toEqual(listed.map((row) => row.dueAt).sort((a, b) => a! - b!));
      // Without `perTenant`, the limit alone: the first 4 by tenant name ('a.b', 'al', 'al-x', ...).
      expect(
        (await store.listParked(bucket, h.clock.now() + 1_000, 4)).map((row) => row.tenant).sort(),
      ).toEqual(['a.b', 'a.b', 'al', 'al-x']);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'reads a class with at most 16 Queries a round, from a point each round draws, so every tenant of many is reached',
    async () => {
      const { tableName, client } = await dynamo.newTable();
      let queries = 0;
      const counting = new Proxy(client, {
        get(target, property) {
          if (property !== 'send') return Reflect.get(target, property, target);
          return (command: Parameters<typeof client.send>[0]) => {
            if (
              command instanceof QueryCommand &&
              String(command.input.ExpressionAttributeValues?.[':low']).startsWith('C#')
            )
              queries++;
            return target.send(command);
          };
        },
      });
      const store = new DynamoDbJobStore({ client: counting, tableName });
      const h = harness(happyScript(), {
        store,
        rateLimiter: new DynamoDbRateLimiter({ client, tableName, ratePerSecond: 2 }),
      });
      const tenants = Array.from({ length: 20 }, (_, i) => `${'abcdefghijklmnopqrst'[i]}-tenant`);
      for (const tenant of tenants) {
        const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: tenant }, tenant });
        expect(
          await store.commit(
            { ...job, version: job.version + 1, parked: { bucket, withinMs: 2_000 } },
            job.version,
          ),
        ).toBe(true);
      }
      const reached = new Set<string>();
      for (const startAt of [0, 0.2, 0.4, 0.6, 0.8]) {
        queries = 0;
        const listed = await store.listParked(bucket, h.clock.now() + 1_000, 12, { perTenant: 4, startAt });
        expect(queries).toBeLessThanOrEqual(16);
        expect(listed.length).toBeGreaterThanOrEqual(10);
        for (const row of listed) reached.add(row.tenant ?? '?');
      }
      expect([...reached].sort()).toEqual(tenants);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "a parked row in the old key format (no tenant) is left by release rounds, sent by the sweeper's nudge, and given the new key by the migration",
    async () => {
      const { tableName, client } = await dynamo.newTable();
      const store = new DynamoDbJobStore({ client, tableName });
      const h = harness(happyScript(), {
        store,
        rateLimiter: new DynamoDbRateLimiter({ client, tableName, ratePerSecond: 2 }),
        admission: true,
      });
      await fillLine(h.deps.rateLimiter as DynamoDbRateLimiter, h.clock.now(), 20);
      const make = async (issue: string) => {
        const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue } });
        const parked = { ...job, version: job.version + 1, parked: { bucket, withinMs: 2_000 } };
        expect(await store.commit(parked, job.version)).toBe(true);
        return parked;
      };
      const old = await make('written by the code before');
      const migrated = await make('also before');
      // Their rows as the code before wrote them: `<class>#<due>#<id>`.
      for (const job of [old, migrated])
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { PK: `JOB#${job.id}`, SK: 'JOB' },
            UpdateExpression: 'SET GSI2SK = :old',
            ExpressionAttributeValues: { ':old': `C#${String(job.nextRunAt).padStart(13, '0')}#${job.id}` },
          }),
        );
      h.queue.pending = [];
      const until = h.clock.now() + 60_000;
      expect(await store.listParked(bucket, until, 10)).toEqual([]);
      expect(
        (await store.listParked(bucket, until, 10, { oldKeys: true })).map((row) => row.id).sort(),
      ).toEqual([old.id, migrated.id].sort());
      // The migration gives the old rows today's key (a job changed since its scan is skipped).
      const result = await migrateIndexKeys({ client, tableName });
      expect(result).toMatchObject({ skippedByConflict: 0, unreadable: 0 });
      expect(result.updated).toBeGreaterThanOrEqual(2);
      expect((await store.listParked(bucket, until, 10)).map((row) => row.id).sort()).toEqual(
        [old.id, migrated.id].sort(),
      );
      // Before a migration, the sweeper's nudge finds an old row once the key's line has ended.
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { PK: `JOB#${old.id}`, SK: 'JOB' },
          UpdateExpression: 'SET GSI2SK = :old',
          ExpressionAttributeValues: { ':old': `C#${String(old.nextRunAt).padStart(13, '0')}#${old.id}` },
        }),
      );
      h.clock.advance(16_000);
      expect(await nudgeParked(sweeperDeps(h), store)).toBe(2);
      expect((await store.get(old.id))!.parked).toBeUndefined();
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

/**
 * A job waiting for a token costs one message per wait, not one per bounce: tokens are
 * reserved in order, and a backlog is served in order. Counted under a fake clock (no timing).
 */
import { describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteRateLimiter } from '../../../shared/backends/local';
import { type Job, submitJob } from '../../../shared/engine';
import {
  initialBucket,
  type RateBucketOptions,
  type RateBucketState,
  reserveAhead,
  take,
} from '../../../shared/engine/admission/rate-bucket';
import { firstMessageSender } from '../../../shared/engine/first-message';
import type { RateDecision } from '../../../shared/engine/ports';
import { keyFingerprint, runStep } from '../../../shared/engine/runner';
import { sweep } from '../../../shared/engine/sweep';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

/**
 * A limiter on an in-memory database with `reserveAhead` (the DynamoDB limiter's), counting the tokens it hands
 * out (granted, reserved by a take or ahead) and the upstream calls made on them.
 */
class AheadLimiter extends SqliteRateLimiter {
  handedOut = 0;
  #state: RateBucketState | undefined;
  constructor(options: RateBucketOptions) {
    super(openLocalDatabase(':memory:'), options);
  }
  override async take(
    _bucket: string,
    now: number,
    options?: { reserveWithinMs?: number },
  ): Promise<RateDecision> {
    const result = take(this.#at(now), this.config, now, options?.reserveWithinMs);
    this.#state = result.state;
    if (result.decision.granted || result.decision.reserved) this.handedOut++;
    return result.decision;
  }
  async reserveAhead(_bucket: string, now: number, options: { at: number; withinMs: number }) {
    const result = reserveAhead(this.#at(now), this.config, now, options.at, options.withinMs);
    this.#state = result.state;
    if (result.reservedAt !== undefined) this.handedOut++;
    return result.reservedAt;
  }
  #at(now: number): RateBucketState {
    this.#state ??= initialBucket(this.config, now);
    return this.#state;
  }
}

/**
 * Runs `jobs` demo jobs at once against a key budget of 2 calls/s; returns messages and commits per
 * job. `firstTokens`: the submitter takes each new job's first token (engine/first-message.ts).
 */
async function backlog(
  jobs: number,
  reserveHorizonMs?: number,
  ahead = false,
  carriesTokens = false,
  firstTokens = false,
) {
  let polls = 0;
  let calls = 0;
  const base = happyScript(0);
  const limiter = ahead
    ? new AheadLimiter({ ratePerSecond: 2 })
    : SqliteRateLimiter.inMemory({ ratePerSecond: 2 });
  const h = harness(
    (op, body, key) => {
      if (op === 'ai33-2Step2V3') polls++;
      if (op !== 'fetch') calls++;
      return base(op, body, key);
    },
    { rateLimiter: limiter, reserveHorizonMs },
  );
  // A queue like SQS's, whose messages keep the token reserved for their job's call.
  if (carriesTokens) Object.defineProperty(h.queue, 'carriesTokens', { value: true });
  if (firstTokens) {
    const bucket = keyFingerprint((await h.deps.keys.getKey('default'))!);
    h.deps.sendFirstMessage = firstMessageSender({
      rateLimiter: limiter,
      buckets: { bucketOf: async () => bucket },
    });
  }
  let reservedWaits = 0;
  let random = 0;
  h.deps.random = () => {
    random = (random * 9301 + 49297) % 233280;
    return random / 233280;
  };
  let commits = 0;
  const commit = h.store.commit.bind(h.store);
  h.store.commit = async (job: Job, expected: number) => {
    commits++;
    return commit(job, expected);
  };
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++) {
    ids.push((await submitJob(h.deps, { workflow: 'demo', input: { issue: `issue ${i}` } })).job.id);
  }
  const send = h.queue.send.bind(h.queue);
  h.queue.send = async (message, delayMs) => {
    if (message.tokenAt !== undefined) reservedWaits++;
    return send(message, delayMs);
  };
  await drive(h.deps, h.queue, h.clock);
  const finished = await Promise.all(ids.map((id) => h.store.get(id)));
  expect(finished.every((job) => job?.status === 'SUCCEEDED')).toBe(true);
  const handedOut = limiter instanceof AheadLimiter ? limiter.handedOut : undefined;
  return {
    messages: h.queue.sent.length / jobs,
    commits: commits / jobs,
    polls,
    calls,
    handedOut,
    reservedWaits,
  };
}

describe('a backlog waiting for tokens', () => {
  it('costs about what a job alone costs when tokens are reserved in order', async () => {
    const alone = await backlog(1);
    const queued = await backlog(20);
    const bouncing = await backlog(20, 0);
    // Without reservations each waiting job comes back again and again for the next token.
    expect(bouncing.messages).toBeGreaterThan(2 * alone.messages);
    expect(queued.messages).toBeLessThanOrEqual(1.5 * alone.messages);
    expect(queued.messages).toBeLessThan(bouncing.messages / 2);
  });

  it('sends a call once, for when its token comes, when its token is reserved in the commit that schedules it', async () => {
    const alone = await backlog(1, undefined, true);
    const queued = await backlog(20);
    const ahead = await backlog(20, undefined, true);
    // A job alone no longer waits half a second for the next token with a message of its own.
    expect(alone.messages).toBeLessThan((await backlog(1)).messages);
    expect(ahead.messages).toBeLessThan(queued.messages);
    expect(ahead.commits).toBeLessThanOrEqual(queued.commits);
    // What is left above a job alone is the admission of new jobs (2 s horizon): their first calls
    // are not scheduled by a commit of theirs.
    expect(ahead.messages).toBeLessThanOrEqual(1.7 * alone.messages);
    // Every call spent exactly one token: none called without one, none reserved and left unused.
    expect(ahead.handedOut).toBe(ahead.calls);
    expect(alone.handedOut).toBe(alone.calls);
  });

  it('waits for a reserved token with a message that holds it, without a commit, when the queue carries tokens', async () => {
    const recorded = await backlog(20);
    const carried = await backlog(20, undefined, false, true);
    // The same waits and calls; each reserved wait is one commit less (the record is unchanged).
    expect(recorded.reservedWaits).toBe(0);
    expect(carried.reservedWaits).toBeGreaterThan(0);
    expect(carried.messages).toBe(recorded.messages);
    expect(carried.calls).toBe(recorded.calls);
    expect(carried.commits * 20).toBe(recorded.commits * 20 - carried.reservedWaits);
    // With tokens also reserved ahead: every call spent exactly one token, none reserved unused.
    const ahead = await backlog(20, undefined, true, true);
    expect(ahead.handedOut).toBe(ahead.calls);
  });
});

describe("a new job's first message", () => {
  it('holds its first token when the submitter takes it: a backlog costs about what a job alone costs', async () => {
    const alone = await backlog(1, undefined, true, true, true);
    const without = await backlog(20, undefined, true, true);
    const first = await backlog(20, undefined, true, true, true);
    // Sent at once, most of a backlog's first messages found the line taken and waited with a
    // second one. Holding their token, each comes once.
    expect(first.messages).toBeLessThanOrEqual(without.messages - 0.5);
    expect(first.messages).toBeLessThanOrEqual(1.15 * alone.messages);
    expect(first.calls).toBe(without.calls);
    // Every call spent exactly one token: none called without one, none taken and left unused.
    expect(first.handedOut).toBe(first.calls);
    expect(alone.handedOut).toBe(alone.calls);
  });

  it('goes at once, without a token, when the bucket cannot be found or the limiter fails', async () => {
    for (const bucketOf of [
      async () => undefined,
      async () => Promise.reject(new Error('table unreachable')),
    ]) {
      const limiter = new AheadLimiter({ ratePerSecond: 2 });
      const h = harness(happyScript(0), { rateLimiter: limiter });
      Object.defineProperty(h.queue, 'carriesTokens', { value: true });
      h.deps.sendFirstMessage = firstMessageSender({ rateLimiter: limiter, buckets: { bucketOf } });
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'a hinge' } });
      expect(h.queue.sent).toEqual([{ message: { jobId: job.id, version: 1 }, delayMs: 0 }]);
      expect(limiter.handedOut).toBe(0);
      await drive(h.deps, h.queue, h.clock);
      expect((await h.store.get(job.id))?.status).toBe('SUCCEEDED');
    }
  });

  it("sent back to wait, takes its spread from the workers' (seeded) random source, not Math.random", async () => {
    // A key whose line is full 500 ms ahead: a new job's first call is sent back with a spread.
    const limiter = {
      take: async (_bucket: string, now: number): Promise<RateDecision> => ({
        granted: false,
        retryAtMs: now + 500,
      }),
      throttled: async () => {},
      succeeded: async () => {},
    };
    async function firstDelay(random: () => number): Promise<number> {
      const h = harness(happyScript(0), { rateLimiter: limiter });
      Object.defineProperty(h.queue, 'carriesTokens', { value: true });
      h.deps.sendFirstMessage = firstMessageSender({
        rateLimiter: limiter,
        buckets: { bucketOf: async () => 'key' },
        reserveHorizonMs: 0,
        random,
      });
      await submitJob(h.deps, { workflow: 'demo', input: { issue: 'a hinge' } });
      expect(h.queue.sent).toHaveLength(1);
      return h.queue.sent[0]!.delayMs;
    }
    // The least draw returns it with the line; a larger one later; the same draw, the same delay.
    expect(await firstDelay(() => 0)).toBe(500);
    const half = await firstDelay(() => 0.5);
    expect(half).toBeGreaterThan(500);
    expect(await firstDelay(() => 0.5)).toBe(half);
  });

  it('is not lost when its send fails: the sweeper finds the job, and its token is never spent twice', async () => {
    const limiter = new AheadLimiter({ ratePerSecond: 2 });
    let calls = 0;
    const base = happyScript(0);
    const h = harness(
      (op, body, key) => {
        if (op !== 'fetch') calls++;
        return base(op, body, key);
      },
      { rateLimiter: limiter },
    );
    Object.defineProperty(h.queue, 'carriesTokens', { value: true });
    const bucket = keyFingerprint((await h.deps.keys.getKey('default'))!);
    h.deps.sendFirstMessage = firstMessageSender({
      rateLimiter: limiter,
      buckets: { bucketOf: async () => bucket },
    });
    const send = h.queue.send.bind(h.queue);
    h.queue.send = async () => Promise.reject(new Error('SQS unreachable'));
    await expect(submitJob(h.deps, { workflow: 'demo', input: { issue: 'a hinge' } })).rejects.toThrow(
      'SQS unreachable',
    );
    h.queue.send = send;
    const [stranded] = (await h.store.list({})).jobs;
    expect(stranded?.status).toBe('QUEUED');
    h.clock.current += 60_000;
    await sweep(h.deps);
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(stranded!.id))?.status).toBe('SUCCEEDED');
    // The first token was taken and never spent (budget); every call took one token of its own.
    expect(limiter.handedOut).toBe(calls + 1);
  });
});

describe('admission: a call scheduled beyond what can be booked', () => {
  /**
   * Runs the demo's create with admission on; its next call (a poll 10 s ahead) is past 2 x 2 s.
   * `book`: what the limiter's reserveAhead answers (default: nothing booked); `bookAheadMs`: the
   * runtime's booking window (the aws runtime's is 10 minutes).
   */
  async function scheduleWithLine(
    lineTokens: number,
    options: { book?: (at: number) => number | undefined; bookAheadMs?: number } = {},
  ) {
    const asked: number[] = [];
    const limiter = {
      take: async (): Promise<RateDecision> => ({ granted: true }),
      throttled: async () => {},
      succeeded: async () => {},
      reserveAhead: async (_bucket: string, _now: number, { at }: { at: number }) => {
        asked.push(at);
        return options.book?.(at);
      },
      budget: async () => ({ tokens: -lineTokens, ratePerSecond: 2 }),
    };
    const h = harness(happyScript(), {
      rateLimiter: limiter,
      admission: true,
      reserveHorizonMs: 2_000,
      ...(options.bookAheadMs === undefined ? {} : { bookAheadMs: options.bookAheadMs }),
    });
    const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'a hinge' } });
    const sentBefore = h.queue.sent.length;
    const report = await runStep(h.deps, h.queue.takeNext()!.message);
    expect(report.outcome).toBe('committed');
    return {
      job: (await h.store.get(job.id))!,
      sent: h.queue.sent.slice(sentBefore),
      now: h.clock.now(),
      asked,
    };
  }

  it('is booked in its commit when the runtime books that far ahead (aws), and sent for its token', async () => {
    // Without a wider window the bucket is not asked at all (the call is 10 s ahead, past 2 x 2 s).
    expect((await scheduleWithLine(2)).asked).toEqual([]);
    // With one (the aws runtime's): booked 300 ms after its due time, and its one message is for then.
    const booked = await scheduleWithLine(10, { book: (at) => at + 300, bookAheadMs: 60_000 });
    expect(booked.asked).toHaveLength(1);
    const due = booked.asked[0]!;
    expect(due).toBeGreaterThan(booked.now + 4_000);
    expect(booked.job.tokenAt).toBe(due + 300);
    expect(booked.job.nextRunAt).toBe(due + 300);
    expect(booked.job.parked).toBeUndefined();
    expect(booked.sent).toEqual([
      { message: { jobId: booked.job.id, version: booked.job.version }, delayMs: due + 300 - booked.now },
    ]);
  });

  it('falls back to the line rule when the bucket refuses to book it (its list full)', async () => {
    // Refused with a short line: sent for its due time, no token held, not parked.
    const short = await scheduleWithLine(2, { bookAheadMs: 60_000 });
    expect(short.asked).toHaveLength(1);
    expect(short.job.tokenAt).toBeUndefined();
    expect(short.job.parked).toBeUndefined();
    expect(short.sent).toHaveLength(1);
    // Refused with a line longer than its horizon: parked, as a call too far ahead to book.
    const long = await scheduleWithLine(10, { bookAheadMs: 60_000 });
    expect(long.job.parked).toEqual({ bucket: keyFingerprint('sk-test-key'), withinMs: 2_000 });
    expect(long.sent).toEqual([]);
  });

  it("is parked only while the key's line is longer than its horizon, else sent for its due time", async () => {
    // A line of 1 s (a key busy now and then): sent for its due time, not parked.
    const short = await scheduleWithLine(2);
    expect(short.job.parked).toBeUndefined();
    expect(short.job.nextRunAt).toBeGreaterThan(short.now + 4_000);
    expect(short.sent).toEqual([
      {
        message: { jobId: short.job.id, version: short.job.version },
        delayMs: short.job.nextRunAt - short.now,
      },
    ]);
    // A line of 5 s, past the call's 2 s horizon: parked in the same commit, no message.
    const long = await scheduleWithLine(10);
    expect(long.job.parked).toEqual({ bucket: keyFingerprint('sk-test-key'), withinMs: 2_000 });
    expect(long.sent).toEqual([]);
  });
});

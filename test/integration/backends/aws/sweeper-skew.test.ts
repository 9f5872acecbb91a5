// The aws sweeper's view of the job table under clock skew and deadlines, on DynamoDB Local: a job
// created by a clock two hours ahead whose message was lost is found (its createdAt in the sweeper's
// future) and sent, and the runner re-bases and runs it (not two hours later); a parked job past its
// deadline behind a key whose line goes on (so the nudge passes it by) is sent and failed.
import { describe, expect, it } from 'vitest';
import {
  DynamoDbJobStore,
  type DynamoDbRateLimiter,
  DynamoDbRateLimiter as Limiter,
} from '../../../../shared/backends/aws';
import { submitJob } from '../../../../shared/engine';
import { nudgeParked } from '../../../../shared/engine/admission/nudge';
import { keyFingerprint, runStep } from '../../../../shared/engine/runner';
import { expireParked, sweep } from '../../../../shared/engine/sweep';
import { dynamoDbLocalForThisFile } from '../../../support/dynamodb-local';
import { REAL_PROCESS_TIMEOUT_MS } from '../../../support/timeouts';
import { happyScript, harness } from '../../../unit/engine/fixtures';

const hour = 3_600_000;
const bucket = keyFingerprint('sk-test-key');

const dynamo = dynamoDbLocalForThisFile();

async function world() {
  const { tableName, client } = await dynamo.newTable();
  const store = new DynamoDbJobStore({ client, tableName });
  const limiter = new Limiter({ client, tableName, ratePerSecond: 2 });
  const h = harness(happyScript(), { store, rateLimiter: limiter, admission: true });
  return { h, store, limiter };
}

async function fillLine(limiter: DynamoDbRateLimiter, now: number, count: number) {
  for (let i = 0; i < count; i++) {
    const decision = await limiter.take(bucket, now, { reserveWithinMs: 600_000 });
    expect(decision.granted || decision.reserved).toBe(true);
  }
}

describe('the aws sweeper', () => {
  it(
    'sends a job created by a clock two hours ahead whose message was lost; the runner re-bases and runs it',
    async () => {
      const { h, store } = await world();
      h.clock.advance(2 * hour);
      const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'fast laptop' } });
      h.queue.pending = []; // lost between commit and send
      h.clock.advance(-2 * hour);
      // Its due time is two hours ahead: listDue passes it by.
      expect(await store.listDue(h.clock.now(), 10)).toEqual([]);
      const swept = await sweep(h.deps);
      expect(swept).toMatchObject({ writtenAhead: 1, requeued: 1 });
      const message = h.queue.takeNext()!;
      expect(message.message).toEqual({ jobId: job.id, version: job.version });
      await runStep(h.deps, message.message);
      const after = (await store.get(job.id))!;
      expect(after.updatedAt).toBeLessThanOrEqual(h.clock.now());
      expect(after.version).toBeGreaterThan(job.version);
      // Re-based on the sweeper's clock: nothing ahead any more.
      expect(await store.listWrittenAhead(h.clock.now(), 10)).toEqual([]);
      expect((await sweep(h.deps)).writtenAhead).toBe(0);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'fails a parked job past its deadline even while its key is busy',
    async () => {
      const { h, store, limiter } = await world();
      const now = h.clock.now();
      await fillLine(limiter, now, 20);
      const { job } = await submitJob(h.deps, {
        workflow: 'demo',
        input: { issue: 'parked' },
        deadlineMs: 20 * 60_000,
      });
      h.clock.advance(2_000);
      await runStep(h.deps, h.queue.takeNext()!.message);
      expect((await store.get(job.id))!.parked).toBeDefined();
      // Past its deadline, with the key's line still going (other jobs hold its tokens).
      h.clock.advance(21 * 60_000);
      await fillLine(limiter, h.clock.now(), 20);
      const sweeper = { store, queue: h.queue, clock: h.clock };
      expect(await nudgeParked(sweeper, store)).toBe(0);
      expect(await expireParked(sweeper, store)).toBe(1);
      const sent = h.queue.takeNext()!;
      await runStep(h.deps, sent.message);
      const failed = (await store.get(job.id))!;
      expect(failed.status).toBe('FAILED');
      expect(failed.lastError?.kind).toBe('deadline');
      expect(await expireParked(sweeper, store)).toBe(0);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

/**
 * A job waiting for a token costs one message per wait, not one per bounce (issue 10): tokens are
 * reserved in order, and a backlog is served in order. Counted under a fake clock (no timing).
 */
import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../shared/backends/local';
import { type Job, submitJob } from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

/** Runs `jobs` demo jobs at once against a key budget of 2 calls/s; returns messages and commits per job. */
async function backlog(jobs: number, reserveHorizonMs?: number) {
  let polls = 0;
  const base = happyScript(0);
  const h = harness(
    (op, body, key) => {
      if (op === 'ai33-2Step2V3') polls++;
      return base(op, body, key);
    },
    { rateLimiter: new InMemoryRateLimiter({ ratePerSecond: 2 }), reserveHorizonMs },
  );
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
  await drive(h.deps, h.queue, h.clock);
  const finished = await Promise.all(ids.map((id) => h.store.get(id)));
  expect(finished.every((job) => job?.status === 'SUCCEEDED')).toBe(true);
  return { messages: h.queue.sent.length / jobs, commits: commits / jobs, polls };
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
});

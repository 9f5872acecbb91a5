// opflow's own runaway guard on the simulated deployment. The step worker's RecursiveLoop is Allow
// (a job's steps are one chain of messages, longer than Lambda's 16 hops), so nothing at AWS stops a
// job that never finishes a step: its worker dies on every delivery, the message goes to the
// dead-letter queue, and the sweeper sends it again every minute until the deadline, a day later.
// The bundled functions count each re-send against the job's budget (OPFLOW_JOB_MESSAGE_BUDGET)
// and the sweeper fails the job at it, with a metric (a healthy job under the default budget:
// test/e2e/local/message-budget.test.ts and every other aws e2e).
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerHandler } from '../../../scripts/lambda/sqs-event-source';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const novelty = {
  workflow: 'novelty-check',
  input: {
    text: 'A bicycle brake lever whose travel adapts to the rider’s grip force through a magnetorheological damper.',
  },
};
const budget = 12;

let world: AwsWorld | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe('the per-job message budget on aws', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('fails a job whose worker dies on every delivery once the sweeper has re-sent it its budget', async () => {
    const poisoned = new Set<string>();
    world = await AwsWorld.start({
      maxReceiveCount: 2,
      // One record an invocation: the dying worker takes only the poisoned job's message down.
      batchSize: 1,
      env: (env) => ({ ...env, OPFLOW_JOB_MESSAGE_BUDGET: String(budget) }),
      workerFactory: async (w) => {
        const { handler } = await w.bundles.load<{ handler: WorkerHandler }>('worker');
        return async (event, context) => {
          if (event.Records.some((record) => [...poisoned].some((id) => record.body.includes(id))))
            throw new Error('the worker ran out of memory on this job');
          return handler(event, context);
        };
      },
    });
    const poison = await world.submit(novelty);
    poisoned.add(poison);
    const [stopped] = await world.settle([poison], { maxRounds: 5_000 });

    expect(stopped).toMatchObject({
      status: 'FAILED',
      messages: budget,
      lastError: { kind: 'message-budget', retryable: false },
    });
    expect(stopped?.lastError?.message).toContain(`sent ${budget} messages`);
    // Stopped by the sweeper within the budget's minutes, not at the deadline a day later.
    expect(stopped!.finishedAt! - stopped!.createdAt).toBeLessThan((budget + 5) * 60_000);
    expect(world.sweeps).toBeGreaterThanOrEqual(budget);
    expect(world.metricTotals()['MessageBudgetExceeded']).toBe(1);
    expect(
      world.logLines().some((line) => line.message === 'job failed: it used up its message budget'),
    ).toBe(true);
    // Its status through the job API says why.
    const answer = await world.api('GET', `/jobs/${poison}`);
    expect(JSON.stringify(answer.body)).toContain('message-budget');
  });
});

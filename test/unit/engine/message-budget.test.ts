import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  defaultMessageBudget,
  defineWorkflow,
  type EngineDeps,
  messageBudgetFromEnv,
  retryJob,
  stepsFor,
  submitJob,
  sweep,
  type Workflow,
} from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

// A workflow with a bug: its second step sends the job back to the first one for ever (each step
// one poll call, 5 s apart). Only the deadline (a day) would end it without the runaway guard.
const loopInput = z.object({ topic: z.string() });
const step = stepsFor('loop', loopInput);
const ask = step.call({
  name: 'ask',
  operation: 'ai33-2Step2V3',
  poll: { firstDelayMs: 5_000, factor: 1, maxDelayMs: 5_000, giveUpAfterMs: 600_000 },
  request: () => ({ task_id: 'task-1' }),
  decide: () => ({ type: 'next' }),
});
const loop = defineWorkflow({
  name: 'loop',
  version: 1,
  description: 'steps back for ever',
  input: loopInput,
  steps: [
    ask,
    step.call({
      name: 'again',
      operation: 'ai33-2Step2V3',
      request: () => ({ task_id: 'task-1' }),
      decide: () => ({ type: 'next', step: ask }),
    }),
  ],
  report: () => ({ title: 'loop', markdown: '' }),
}) as Workflow;

function loopHarness(overrides: Partial<EngineDeps> = {}) {
  const h = harness(() => ({ status: 'RUNNING' }), overrides);
  (h.deps.workflows as Map<string, Workflow>).set(loop.name, loop);
  return h;
}

describe('the per-job message budget (runaway guard)', () => {
  it('fails a job that loops, loudly, once it has sent its budget of messages', async () => {
    const counted: string[] = [];
    const h = loopHarness({
      messageBudget: 25,
      metrics: { count: (name) => counted.push(name) },
    });
    const { job } = await submitJob(h.deps, { workflow: 'loop', input: { topic: 'x' } });
    const steps = await drive(h.deps, h.queue, h.clock);
    const stopped = (await h.store.get(job.id))!;
    expect(stopped.status).toBe('FAILED');
    expect(stopped.messages).toBe(25);
    expect(stopped.lastError).toMatchObject({ kind: 'message-budget', retryable: false });
    expect(stopped.lastError?.message).toContain('25 messages');
    expect(stopped.lastError?.message).toContain('OPFLOW_JOB_MESSAGE_BUDGET');
    // The first message (the submit's) plus one per counted commit: the 26th step is the failure.
    expect(steps).toBe(26);
    expect(h.client.calls).toHaveLength(26);
    expect(counted.filter((name) => name === 'MessageBudgetExceeded')).toEqual(['MessageBudgetExceeded']);
    expect(h.queue.pending).toHaveLength(0);
  });

  it('counts one message per step of a real run, far below the default budget', async () => {
    const h = harness(happyScript(2));
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: 'reduce battery swelling' },
    });
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // create -> recommend (3 polls) -> submit -> document: every commit but the last sends one.
    expect(done.messages).toBe(5);
    expect(done.messages).toBeLessThan(defaultMessageBudget / 100);
  });

  it("leaves the sweeper re-send uncounted: it goes at the job's version, so a message in flight stays valid", async () => {
    const h = loopHarness({ messageBudget: 3 });
    const { job } = await submitJob(h.deps, { workflow: 'loop', input: { topic: 'x' } });
    const original = h.queue.takeNext()!;
    h.clock.current += 60_000;
    expect((await sweep(h.deps)).requeued).toBe(1);
    const resent = h.queue.takeNext()!;
    expect(resent.message).toEqual(original.message);
    const stored = (await h.store.get(job.id))!;
    expect(stored.version).toBe(job.version);
    expect(stored.messages).toBe(job.messages);
  });

  it('gives a retried job a fresh count', async () => {
    const h = loopHarness({ messageBudget: 4 });
    const { job } = await submitJob(h.deps, { workflow: 'loop', input: { topic: 'x' } });
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!.status).toBe('FAILED');
    const retried = await retryJob(h.deps, job.id);
    expect(retried.messages).toBeUndefined();
    await drive(h.deps, h.queue, h.clock);
    expect((await h.store.get(job.id))!).toMatchObject({ status: 'FAILED', messages: 4 });
  });

  it('reads its budget from OPFLOW_JOB_MESSAGE_BUDGET, and names the variable when it is wrong', () => {
    expect(messageBudgetFromEnv({})).toBe(defaultMessageBudget);
    expect(messageBudgetFromEnv({ OPFLOW_JOB_MESSAGE_BUDGET: ' 250 ' })).toBe(250);
    for (const bad of ['0', '-3', '2.5', 'lots'])
      expect(() => messageBudgetFromEnv({ OPFLOW_JOB_MESSAGE_BUDGET: bad })).toThrow(
        /OPFLOW_JOB_MESSAGE_BUDGET must be a whole number/,
      );
  });
});

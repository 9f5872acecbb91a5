/**
 * An optional step (extra data for the report): its failure for good moves the job on to the next
 * step and keeps why under `skippedSteps`; a passing fault is still retried; a required step's
 * failure still fails the job; and an optional last step is refused when the workflow is defined.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  advance,
  defineWorkflow,
  type Job,
  type StepFailure,
  skippedSteps,
  stepsFor,
  type Workflow,
} from '../../../shared/engine';
import { makeJob } from '../../support/factories';

const input = z.object({ text: z.string() });
const step = stepsFor('optional-demo', input);

const extra = step.call({
  name: 'extra',
  operation: 'p011BasicPatentDataSimpleBibliography',
  optional: true,
  request: () => ({ patent_number: 'CN112345678A' }),
  decide: (data) => (data?.length ? { type: 'next' } : { type: 'fail', message: 'no record came back' }),
});

const workflow = defineWorkflow({
  name: 'optional-demo',
  version: 1,
  description: 'create, an optional read, a last read',
  input,
  steps: [
    step.call({
      name: 'create',
      operation: 'ai35-1NoveltySearchSubmit',
      request: (ctx) => ({ input: ctx.input.text, lang: 'en' }),
      decide: () => ({ type: 'next' }),
    }),
    extra,
    step.call({
      name: 'last',
      operation: 'ai35-11ReportGet',
      request: () => ({ task_id: 't' }),
      decide: () => ({ type: 'complete' }),
    }),
  ],
  report: () => ({ title: 'demo', markdown: '# demo' }),
}) as Workflow;

const now = 5_000_000;
const random = () => 0.5;
const atExtra = (overrides: Partial<Job> = {}): Job =>
  makeJob({
    id: 'job-o',
    workflow: 'optional-demo',
    status: 'RUNNING',
    step: 'extra',
    version: 2,
    input: { inline: { text: 'x' } },
    context: { taskId: 't' },
    nextRunAt: now,
    deadlineAt: now + 3_600_000,
    createdAt: now - 1000,
    updatedAt: now - 1000,
    ...overrides,
  });

const forbidden: StepFailure = {
  kind: 'forbidden',
  message: 'the key has no permission for this operation [HTTP 403, code 67200004]',
  retryable: false,
  httpStatus: 403,
  operationId: 'p011BasicPatentDataSimpleBibliography',
};

describe('an optional step', () => {
  it('goes on with the next step when its call fails for good, keeping why in the context', () => {
    const result = advance(
      workflow,
      atExtra(),
      { type: 'error', failure: forbidden, usage: { calls: 1, failedCalls: 1 } },
      now,
      random,
    );
    expect(result.job).toMatchObject({ step: 'last', status: 'RUNNING', attempts: 0, version: 3 });
    expect(result.job.lastError).toBeUndefined();
    expect(result.job.context['taskId']).toBe('t');
    expect(skippedSteps(result.job.context)).toEqual({
      extra: {
        kind: 'forbidden',
        message: forbidden.message,
        httpStatus: 403,
        operationId: 'p011BasicPatentDataSimpleBibliography',
        at: now,
        version: 3,
      },
    });
    // The failed call is still counted.
    expect(result.job.usage).toMatchObject({ calls: 1, failedCalls: 1 });
  });

  it('retries a passing fault, and goes on once the attempts are used up', () => {
    const busy: StepFailure = { kind: 'server', message: 'HTTP 503', retryable: true, httpStatus: 503 };
    const first = advance(workflow, atExtra(), { type: 'error', failure: busy }, now, random);
    expect(first.job).toMatchObject({ step: 'extra', attempts: 1 });
    expect(first.delayMs).toBeGreaterThan(0);
    const last = advance(workflow, atExtra({ attempts: 5 }), { type: 'error', failure: busy }, now, random);
    expect(last.job).toMatchObject({ step: 'last', status: 'RUNNING' });
    expect(skippedSteps(last.job.context)['extra']).toMatchObject({ kind: 'server', message: 'HTTP 503' });
  });

  it('does not wait out a quota pause, and goes on after its own `fail` decision too', () => {
    const quota: StepFailure = { kind: 'quota-exhausted', message: 'quota used up', retryable: true };
    const paused = advance(workflow, atExtra(), { type: 'error', failure: quota }, now, random);
    expect(paused.job.step).toBe('last');
    const failed = advance(
      workflow,
      atExtra(),
      { type: 'decision', decision: { type: 'fail', message: 'no record came back' } },
      now,
      random,
    );
    expect(failed.job).toMatchObject({ step: 'last', status: 'RUNNING' });
    expect(skippedSteps(failed.job.context)['extra']).toMatchObject({
      kind: 'upstream-failed',
      message: 'no record came back',
    });
  });

  it('leaves a required step’s failure failing the job', () => {
    const result = advance(
      workflow,
      atExtra({ step: 'last' }),
      { type: 'error', failure: forbidden },
      now,
      random,
    );
    expect(result.job.status).toBe('FAILED');
    expect(skippedSteps(result.job.context)).toEqual({});
  });

  it('cannot be the last step', () => {
    expect(() =>
      defineWorkflow({
        name: 'optional-last',
        version: 1,
        description: 'x',
        input,
        steps: [extra],
        report: () => ({ title: 'x', markdown: '# x' }),
      }),
    ).toThrow(/step "extra" is optional, so it cannot be the last step/);
  });
});

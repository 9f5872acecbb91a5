/**
 * A step the job's input leaves out (`skipWhen`): the runner skips it before any token, key or
 * call, however the job reaches it (in order, or after an optional step before it failed for good),
 * several in a row in one commit; `skippedSteps` keeps each with its reason, the history event and
 * the timeline say "skipped", and a skippable last step is refused when the workflow is defined.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { buildTimeline } from '../../../shared/dashboard/timeline';
import {
  advance,
  defineWorkflow,
  type Job,
  runStep,
  skippedSteps,
  stepsFor,
  stepsLeftOut,
  submitJob,
  type Workflow,
} from '../../../shared/engine';
import { eventOf, type JobEvent } from '../../../shared/engine/history';
import { drive } from '../../support/memory-ports';
import { upstreamError } from '../../support/scripted-client';
import { harness } from './fixtures';

const input = z.object({
  text: z.string(),
  extra: z.boolean().default(true),
  more: z.boolean().default(true),
});
const step = stepsFor('skip-demo', input);

type DemoInput = z.infer<typeof input>;
const extraOff = (state: { input: DemoInput }) => (state.input.extra ? undefined : '"extra" is false');

const workflow = defineWorkflow({
  name: 'skip-demo',
  version: 1,
  description: 'create, an optional read, two reads the input may leave out, a last read',
  input,
  steps: [
    step.call({
      name: 'create',
      operation: 'ai35-1NoveltySearchSubmit',
      request: (ctx) => ({ input: ctx.input.text, lang: 'en' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'bibliography',
      operation: 'p011BasicPatentDataSimpleBibliography',
      optional: true,
      request: () => ({ patent_number: 'CN112345678A' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'legal-status',
      operation: 'p041BasicPatentDataSimpleLegalStatus',
      optional: true,
      skipWhen: extraOff,
      request: () => ({ patent_number: 'CN112345678A' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'family',
      operation: 'p014BasicPatentDataPatentFamily',
      optional: true,
      skipWhen: (state) => (state.input.more ? undefined : '"more" is false'),
      request: () => ({ patent_number: 'CN112345678A' }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'last',
      operation: 'ai35-11ReportGet',
      request: () => ({ task_id: 't' }),
      decide: () => ({ type: 'complete' }),
    }),
  ],
  report: () => ({ title: 'demo', markdown: '# demo' }),
}) as Workflow;

/** The upstream's answers: every call recorded; p011 refused (403) for good. */
const script = (operationId: string) => {
  if (operationId === 'ai35-1NoveltySearchSubmit') return { task_id: 't' };
  if (operationId === 'p011BasicPatentDataSimpleBibliography')
    throw upstreamError('forbidden', { httpStatus: 403, retryable: false });
  if (operationId === 'ai35-11ReportGet') return { status: 2, report_url: 'https://example.test/r.pdf' };
  return [];
};

async function run(jobInput: Record<string, unknown>) {
  const events: JobEvent[] = [];
  const h = harness(script, {
    workflows: new Map([[workflow.name, workflow]]),
    onJobChange: (job) => events.push(eventOf(job)),
  });
  const { job } = await submitJob(h.deps, { workflow: 'skip-demo', input: { text: 'x', ...jobInput } });
  await drive(h.deps, h.queue, h.clock);
  const done = (await h.store.get(job.id))!;
  return { done, events, operations: h.client.calls.map((call) => call.operationId) };
}

describe('a step the input leaves out', () => {
  it('is never called after an optional step before it failed for good, and says why', async () => {
    const { done, events, operations } = await run({ extra: false });
    expect(done.status).toBe('SUCCEEDED');
    expect(operations).toEqual([
      'ai35-1NoveltySearchSubmit',
      'p011BasicPatentDataSimpleBibliography',
      'p014BasicPatentDataPatentFamily',
      'ai35-11ReportGet',
    ]);
    const skipped = skippedSteps(done.context);
    expect(skipped['bibliography']).toMatchObject({ kind: 'forbidden' });
    expect(skipped['legal-status']).toMatchObject({ kind: 'skipped', message: '"extra" is false' });
    // The commit that skipped it is on the job's history, and its timeline says so.
    const skipEvent = events.find((event) => event.skipped?.some((entry) => entry.step === 'legal-status'));
    expect(skipEvent).toMatchObject({
      step: 'family',
      skipped: [{ step: 'legal-status', reason: '"extra" is false' }],
    });
    // No call, no cost in that commit.
    const before = events[events.indexOf(skipEvent!) - 1]!;
    expect(skipEvent!.usage.calls).toBe(before.usage.calls);
    const timeline = buildTimeline(workflow, done, events);
    expect(timeline.steps.find((entry) => entry.name === 'legal-status')).toMatchObject({
      state: 'skipped',
      skipped: '"extra" is false',
      calls: 0,
    });
    expect(timeline.steps.find((entry) => entry.name === 'bibliography')?.skipped).toMatch(/./);
  });

  it('skips several in a row in one commit, with no token, key or call', async () => {
    const { done, events, operations } = await run({ extra: false, more: false });
    expect(done.status).toBe('SUCCEEDED');
    expect(operations).not.toContain('p041BasicPatentDataSimpleLegalStatus');
    expect(operations).not.toContain('p014BasicPatentDataPatentFamily');
    const skipEvent = events.find((event) => event.skipped?.some((entry) => entry.step === 'family'));
    expect(skipEvent).toMatchObject({
      step: 'last',
      skipped: [
        { step: 'legal-status', reason: '"extra" is false' },
        { step: 'family', reason: '"more" is false' },
      ],
    });
  });

  it('runs every step when the input turns nothing off', async () => {
    const { operations } = await run({});
    expect(operations).toContain('p041BasicPatentDataSimpleLegalStatus');
    expect(operations).toContain('p014BasicPatentDataPatentFamily');
  });

  it('is skipped before the key is looked up or a token taken', async () => {
    let keysAsked = 0;
    const h = harness(script, {
      workflows: new Map([[workflow.name, workflow]]),
      keys: {
        getKey: async () => {
          keysAsked += 1;
          return 'sk-test-key';
        },
        refresh: async () => 'sk-test-key',
      },
    });
    const { job } = await submitJob(h.deps, {
      workflow: 'skip-demo',
      input: { text: 'x', extra: false, more: false },
    });
    const atStep: Job = { ...job, step: 'legal-status', version: job.version + 1 };
    await h.store.commit(atStep, job.version);
    const report = await runStep(h.deps, { jobId: job.id, version: atStep.version });
    expect(report).toMatchObject({
      outcome: 'committed',
      job: { step: 'last', version: atStep.version + 1 },
    });
    expect(keysAsked).toBe(0);
    expect(h.client.calls).toEqual([]);
  });

  it('leaves advance() pure: the reasons are given, the current step must be among them', () => {
    const job = { ...({} as Job), step: 'legal-status', context: {}, version: 3, nextRunAt: 10 } as Job;
    const unchanged = advance(workflow, job, { type: 'skip', reasons: { family: 'no' } }, 10, () => 0.5);
    expect(unchanged.unchanged).toBe(true);
    expect(
      stepsLeftOut(workflow, {
        job,
        input: { text: 'x', extra: false, more: true },
        context: {},
        selections: {},
        now: 0,
      }),
    ).toEqual({
      'legal-status': '"extra" is false',
    });
  });

  it('cannot be the last step', () => {
    expect(() =>
      defineWorkflow({
        name: 'bad',
        version: 1,
        description: 'a skippable last step',
        input,
        steps: [
          step.call({
            name: 'only',
            operation: 'ai35-11ReportGet',
            skipWhen: () => 'never wanted',
            request: () => ({ task_id: 't' }),
            decide: () => ({ type: 'complete' }),
          }),
        ],
        report: () => ({ title: 'x', markdown: 'x' }),
      }),
    ).toThrow(/may be skipped \(skipWhen\), so it cannot be the last step/);
  });
});

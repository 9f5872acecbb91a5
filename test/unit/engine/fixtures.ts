/** A small find-solution-shaped workflow and wiring for the engine's unit tests. */
import * as z from 'zod';
import { defineWorkflow, type EngineDeps, stepsFor, type Workflow } from '../../../shared/engine';
import { writeJobReport } from '../../../shared/reports/write-job-report';
import {
  FakeClock,
  MemoryJobStore,
  MemoryQueue,
  MemoryReportStore,
  unlimitedRate,
} from '../../support/memory-ports';
import { type Script, ScriptedClient } from '../../support/scripted-client';

const demoInput = z.object({ issue: z.string().min(1) });
const step = stepsFor('demo', demoInput);

const recommend = step.call({
  name: 'recommend',
  operation: 'ai33-2Step2V3',
  poll: { firstDelayMs: 10_000, factor: 2, maxDelayMs: 40_000, giveUpAfterMs: 600_000 },
  request: (ctx) => ({ task_id: String(ctx.context.taskId) }),
  decide: (data) =>
    data.status === 'RUNNING'
      ? { type: 'poll' }
      : data.status === 'FAILED'
        ? { type: 'fail', message: 'recommendation failed upstream' }
        : {
            type: 'select',
            offer: {
              prompt: 'Choose recommendations',
              options: (data.recommend ?? []).map((label, index) => ({
                id: `r${index + 1}`,
                label: String(label),
                preselected: false,
              })),
            },
          },
});

export const demo = defineWorkflow({
  name: 'demo',
  version: 1,
  description: 'create, poll, select, submit, poll, fetch',
  input: demoInput,
  steps: [
    step.call({
      name: 'create',
      operation: 'ai33-1Step1V3',
      request: (ctx) => ({ lang: 'en', solution_issues: ctx.input.issue }),
      decide: (data) => ({ type: 'next', context: { taskId: data.task_id } }),
    }),
    recommend,
    step.call({
      name: 'submit',
      operation: 'ai33-3Step3SubmitV3',
      needs: [recommend],
      request: (ctx) => ({
        lang: 'en',
        task_id: String(ctx.context.taskId),
        recommend: [...ctx.chosen(recommend)].map((id) =>
          String(ctx.output(recommend).recommend?.[Number(id.slice(1)) - 1] ?? ''),
        ),
      }),
      decide: () => ({ type: 'next' }),
    }),
    step.fetch({
      name: 'document',
      url: (ctx) => `http://upstream.test/files/${String(ctx.context.taskId)}`,
      fileName: () => 'solution.pdf',
      decide: () => ({ type: 'complete' }),
    }),
  ],
  report: (r) => ({
    title: `Demo for ${r.job.id}`,
    markdown: `# Demo\n\nChosen: ${(r.selections.recommend ?? []).join(', ')}\n\n<script>alert(1)</script>\n`,
  }),
}) as Workflow;

export interface Harness {
  deps: EngineDeps;
  clock: FakeClock;
  store: MemoryJobStore;
  queue: MemoryQueue;
  reports: MemoryReportStore;
  client: ScriptedClient;
}

/** A happy upstream: the recommendation runs for `runningPolls` polls, then offers three options. */
export function happyScript(runningPolls = 2): Script {
  let polls = 0;
  return (operationId) => {
    switch (operationId) {
      case 'ai33-1Step1V3':
        return { task_id: 'task-1' };
      case 'ai33-2Step2V3':
        polls++;
        return polls <= runningPolls
          ? { status: 'RUNNING' }
          : { status: 'SUCCEED', recommend: ['alpha', 'beta', 'gamma'] };
      case 'ai33-3Step3SubmitV3':
        return { task_id: 'task-1' };
      case 'fetch':
        return '%PDF-1.4 demo';
      default:
        throw new Error(`unexpected ${operationId}`);
    }
  };
}

export function harness(script: Script = happyScript(), overrides: Partial<EngineDeps> = {}): Harness {
  const clock = new FakeClock();
  const store = new MemoryJobStore();
  const queue = new MemoryQueue(clock);
  const reports = new MemoryReportStore();
  const client = new ScriptedClient(script);
  const deps: EngineDeps = {
    store,
    queue,
    reports,
    clock,
    client,
    keys: { getKey: async () => 'sk-test-key', refresh: async () => 'sk-test-key' },
    rateLimiter: unlimitedRate,
    random: () => 0.5,
    workflows: new Map([[demo.name, demo]]),
    writeReport: writeJobReport,
    ...overrides,
  };
  return { deps, clock, store, queue, reports, client };
}

// The job timeline: figures of each step come from the differences between recorded events.
import { describe, expect, it } from 'vitest';
import { buildTimeline } from '../../../shared/dashboard/timeline';
import { eventOf } from '../../../shared/engine/history';
import { emptyUsage, type Job, type JobUsage } from '../../../shared/engine/job-record';
import { workflows } from '../../../shared/workflows';

const noveltyCheck = workflows.get('novelty-check')!;

import { makeJob, T0 } from '../../support/factories';

const usage = (calls: number, billedUnits: number, callMs: number): JobUsage => ({
  ...emptyUsage(),
  calls,
  billedUnits,
  callMs,
});

describe('buildTimeline', () => {
  it('gives each step its calls, time, billed units, retries, polls and errors', () => {
    const base = makeJob({ workflow: 'novelty-check', step: 'submit' });
    const versions: Job[] = [
      { ...base, version: 1, updatedAt: T0 },
      // submit failed once (retried), then went through.
      {
        ...base,
        version: 2,
        status: 'WAITING',
        attempts: 1,
        updatedAt: T0 + 1_000,
        usage: usage(1, 0, 100),
        lastError: {
          step: 'submit',
          kind: 'server',
          code: 500,
          message: 'boom',
          retryable: true,
          at: T0 + 1_000,
          correlationId: 'c-1',
        },
      },
      {
        ...base,
        version: 3,
        status: 'RUNNING',
        step: 'summary',
        updatedAt: T0 + 3_000,
        usage: usage(2, 5, 250),
      },
      // summary polled twice.
      {
        ...base,
        version: 4,
        status: 'WAITING',
        step: 'summary',
        polls: 1,
        updatedAt: T0 + 4_000,
        usage: usage(3, 5, 300),
      },
      {
        ...base,
        version: 5,
        status: 'WAITING',
        step: 'summary',
        polls: 2,
        updatedAt: T0 + 6_000,
        usage: usage(4, 6, 340),
      },
    ];
    const job = versions.at(-1)!;
    const timeline = buildTimeline(noveltyCheck, job, versions.map(eventOf));
    expect(timeline.recorded).toBe(true);
    const [submit, summary, confirm] = timeline.steps;
    expect(submit).toMatchObject({
      name: 'submit',
      operation: 'ai35-1NoveltySearchSubmit',
      state: 'done',
      calls: 2,
      callMs: 250,
      billedUnits: 5,
      retries: 1,
      startedAt: T0,
      endedAt: T0 + 3_000,
      durationMs: 3_000,
    });
    expect(submit!.errors).toEqual([expect.objectContaining({ code: 500, correlationId: 'c-1' })]);
    expect(summary).toMatchObject({
      state: 'current',
      calls: 2,
      billedUnits: 1,
      polls: 2,
      startedAt: T0 + 3_000,
    });
    expect(confirm).toMatchObject({ state: 'pending', calls: 0 });
    expect(confirm!.startedAt).toBeUndefined();
  });

  it('without a history shows the steps and where the job is, saying nothing was recorded', () => {
    const job = makeJob({ workflow: 'novelty-check', step: 'features', status: 'FAILED' });
    const timeline = buildTimeline(noveltyCheck, job, []);
    expect(timeline.recorded).toBe(false);
    const states = Object.fromEntries(timeline.steps.map((step) => [step.name, step.state]));
    expect(states).toMatchObject({ submit: 'done', features: 'failed', 'confirm-features': 'skipped' });
  });
});

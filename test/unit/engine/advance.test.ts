import { describe, expect, it } from 'vitest';
import { advance, autoSelection, type Job, quotaPauseMs, selectionProblem } from '../../../shared/engine';
import { makeJob } from '../../support/factories';
import { demo } from './fixtures';

const now = 1_000_000;
const job = (overrides: Partial<Job> = {}): Job =>
  makeJob({
    id: 'job-1',
    workflow: 'demo',
    status: 'RUNNING',
    step: 'create',
    version: 3,
    input: { inline: { issue: 'x' } },
    nextRunAt: now,
    deadlineAt: now + 3_600_000,
    createdAt: now - 1000,
    updatedAt: now - 1000,
    ...overrides,
  });
const random = () => 0.5;

describe('advance', () => {
  it('moves to the next step, bumping the version and keeping context and output', () => {
    const result = advance(
      demo,
      job(),
      {
        type: 'decision',
        decision: { type: 'next', context: { taskId: 't' } },
        output: 'reports/job-1/steps/create.json',
        usage: { calls: 1, billedUnits: 2 },
      },
      now,
      random,
    );
    expect(result.job).toMatchObject({
      step: 'recommend',
      version: 4,
      status: 'WAITING',
      context: { taskId: 't' },
      nextRunAt: now + 10_000,
    });
    expect(result.job.outputs).toEqual(['reports/job-1/steps/create.json']);
    expect(result.job.usage).toMatchObject({ calls: 1, billedUnits: 2 });
    expect(result.delayMs).toBe(10_000);
  });

  it('gives up polling after the give-up time with a retryable poll-timeout', () => {
    const polling = job({ step: 'recommend', status: 'WAITING', polls: 12, pollStartedAt: now - 600_000 });
    const result = advance(demo, polling, { type: 'decision', decision: { type: 'poll' } }, now, random);
    expect(result.job.status).toBe('FAILED');
    expect(result.job.lastError).toMatchObject({
      kind: 'poll-timeout',
      retryable: true,
      step: 'recommend',
      operationId: 'ai33-2Step2V3',
    });
  });

  it('pauses on an exhausted quota instead of burning attempts', () => {
    const result = advance(
      demo,
      job(),
      {
        type: 'error',
        failure: { kind: 'quota-exhausted', message: 'quota', retryable: false, code: 67200001 },
      },
      now,
      random,
    );
    expect(result.job).toMatchObject({ status: 'WAITING', attempts: 0, nextRunAt: now + quotaPauseMs });
    expect(result.job.lastError?.code).toBe(67200001);
  });

  it('goes back for a fresh link when a download has expired', () => {
    const fetching = job({ step: 'document' });
    const withRefresh = {
      ...demo,
      steps: demo.steps.map((s) => (s.name === 'document' ? { ...s, refreshFrom: 'submit' } : s)),
    };
    const result = advance(
      withRefresh,
      fetching,
      { type: 'error', failure: { kind: 'not-found', message: 'expired', retryable: false } },
      now,
      random,
    );
    expect(result.job).toMatchObject({ step: 'submit', status: 'RUNNING' });
  });

  it('completes and sets an expiry for stores with TTL', () => {
    const result = advance(
      demo,
      job({ step: 'document' }),
      { type: 'decision', decision: { type: 'complete' } },
      now,
      random,
    );
    expect(result.completed).toBe(true);
    expect(result.job.status).toBe('SUCCEEDED');
    expect(result.job.expiresAt).toBeGreaterThan(now / 1000);
  });

  it('adds the written report to the outputs of the job it completes, once', () => {
    const keys = ['reports/job-1/result.json', 'reports/job-1/report.md', 'reports/job-1/report.html'];
    const before = job({ step: 'document', outputs: ['reports/job-1/steps/create.json', keys[0] ?? ''] });
    const result = advance(
      demo,
      before,
      {
        type: 'decision',
        decision: { type: 'complete' },
        output: 'reports/job-1/attachments/solution.pdf',
        reportOutputs: keys,
      },
      now,
      random,
    );
    expect(result.job.outputs).toEqual([
      'reports/job-1/steps/create.json',
      'reports/job-1/attachments/solution.pdf',
      ...keys,
    ]);
    expect(result.job.version).toBe(before.version + 1);
  });

  it('fails on a deadline with a clear reason', () => {
    const result = advance(demo, job(), { type: 'deadline' }, now, random);
    expect(result.job.lastError).toMatchObject({ kind: 'deadline', step: 'create', retryable: false });
  });
});

describe('selection rules', () => {
  const options = ['a', 'b', 'c'].map((id, i) => ({ id, label: id, preselected: i === 1 }));

  it('auto takes the preselected options, or all when none is marked', () => {
    expect(autoSelection({ prompt: 'p', options })).toEqual(['b']);
    expect(
      autoSelection({ prompt: 'p', options: options.map((o) => ({ ...o, preselected: false })) }),
    ).toEqual(['a', 'b', 'c']);
    expect(
      autoSelection({ prompt: 'p', options: options.map((o) => ({ ...o, preselected: false })), max: 2 }),
    ).toEqual(['a', 'b']);
  });

  it('explains an invalid manual answer', () => {
    expect(selectionProblem(options, 1, 2, ['a', 'c'])).toBeUndefined();
    expect(selectionProblem(options, 1, 2, ['a', 'b', 'c'])).toBe('choose at most 2 options, got 3');
    expect(selectionProblem(options, 1, 2, ['z'])).toMatch(/not among the options offered: z/);
  });

  it('token-reserved moves only the time of a change not yet committed: the same version, the token its own', () => {
    const scheduled = advance(
      demo,
      job(),
      { type: 'decision', decision: { type: 'next' }, usage: { calls: 1 } },
      now,
      random,
    );
    const reserved = advance(demo, scheduled.job, { type: 'token-reserved', at: now + 14_000 }, now, random);
    expect(reserved.job).toEqual({ ...scheduled.job, nextRunAt: now + 14_000, tokenAt: now + 14_000 });
    expect(reserved.job.version).toBe(scheduled.job.version);
    expect(reserved.delayMs).toBe(14_000);
    // Never earlier than the call is due.
    const early = advance(
      demo,
      { ...scheduled.job, nextRunAt: now + 19_000 },
      { type: 'token-reserved', at: now + 1 },
      now,
      random,
    );
    expect(early.job).toMatchObject({ nextRunAt: now + 19_000, tokenAt: now + 19_000 });
  });
});

import { describe, expect, it } from 'vitest';
import { answerSelection, submitJob } from '../../../shared/engine';
import { eventOf } from '../../../shared/engine/history';
import type { Job } from '../../../shared/engine/job-record';
import { answerLabels, choiceText, selectionRoundsView } from '../../../shared/engine/review-record';
import { drive } from '../../support/memory-ports';
import { harness } from './fixtures';

async function waitingJob(h: ReturnType<typeof harness>): Promise<Job> {
  const { job } = await submitJob(h.deps, {
    workflow: 'demo',
    input: { issue: 'reduce battery swelling' },
    selection: { mode: 'manual' },
  });
  await drive(h.deps, h.queue, h.clock);
  const waiting = (await h.store.get(job.id))!;
  expect(waiting.status).toBe('AWAITING_INPUT');
  return waiting;
}

/** The job with a review that needs `approvals` people (as the reviewers' pass records it). */
async function withReview(h: ReturnType<typeof harness>, job: Job, approvals: number): Promise<Job> {
  const next: Job = {
    ...job,
    version: job.version + 1,
    review: {
      step: job.pending!.step,
      offeredAt: job.pending!.offeredAt,
      rule: 'legal',
      approvals,
      rounds: [],
    },
  };
  expect(await h.store.commit(next, job.version)).toBe(true);
  return next;
}

describe('who answered a selection', () => {
  it('keeps who answered, when and how, and the history event of that change says it', async () => {
    const h = harness();
    const job = await waitingJob(h);
    h.clock.advance(5_000);
    const answered = await answerSelection(h.deps, job.id, ['r2'], { via: 'cli', by: 'alice' });
    expect(answered.answers).toEqual([
      {
        via: 'cli',
        by: 'alice',
        step: 'recommend',
        options: ['r2'],
        labels: ['beta'],
        at: h.clock.now(),
        version: answered.version,
      },
    ]);
    expect(eventOf(answered).answer).toMatchObject({ via: 'cli', by: 'alice' });
    await drive(h.deps, h.queue, h.clock);
    const done = (await h.store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.answers).toHaveLength(1);
    expect(eventOf(done).answer).toBeUndefined();
  });

  it('with two approvers: the first confirmation waits, the same person cannot confirm twice, a second person applies it', async () => {
    const h = harness();
    const job = await withReview(h, await waitingJob(h), 2);
    await expect(answerSelection(h.deps, job.id, ['r1'], { via: 'link' })).rejects.toThrow(/two approvers/);
    const first = await answerSelection(h.deps, job.id, ['r1', 'r3'], {
      via: 'link',
      by: 'alice@example.com',
    });
    expect(first.status).toBe('AWAITING_INPUT');
    expect(first.answers?.at(-1)).toMatchObject({ applied: false, by: 'alice@example.com' });
    await expect(
      answerSelection(h.deps, job.id, ['r3', 'r1'], { via: 'link', by: 'Alice@Example.com ' }),
    ).rejects.toThrow(/a second person must confirm/);
    // A different choice becomes the new first confirmation.
    const changed = await answerSelection(h.deps, job.id, ['r2'], { via: 'dashboard', by: 'bob' });
    expect(changed.status).toBe('AWAITING_INPUT');
    const applied = await answerSelection(h.deps, job.id, ['r2'], { via: 'cli', by: 'carol' });
    expect(applied.status).not.toBe('AWAITING_INPUT');
    expect(applied.selections.recommend).toEqual(['r2']);
    expect(applied.answers?.map((a) => [a.by, a.applied])).toEqual([
      ['alice@example.com', false],
      ['bob', false],
      ['carol', undefined],
    ]);
  });

  it('a default taken at the timeout needs no second approver', async () => {
    const h = harness();
    const job = await withReview(h, await waitingJob(h), 2);
    const applied = await answerSelection(h.deps, job.id, ['r1'], { via: 'timeout' });
    expect(applied.status).not.toBe('AWAITING_INPUT');
    expect(applied.answers?.at(-1)).toMatchObject({ via: 'timeout', options: ['r1'] });
  });

  it("shows the label each person saw beside the option's id (the API's rounds and answers); an answer recorded without labels takes them from the offer still awaited, else shows the id", async () => {
    const h = harness();
    const job = await withReview(h, await waitingJob(h), 2);
    const first = await answerSelection(h.deps, job.id, ['r1', 'r3'], { via: 'link', by: 'alice' });
    expect(first.answers?.at(-1)?.labels).toEqual(['alpha', 'gamma']);
    // A record of before labels were kept: the offer awaited still names the options.
    const legacy = { ...first, answers: first.answers!.map(({ labels: _labels, ...answer }) => answer) };
    expect(answerLabels(legacy.answers![0]!, legacy.pending)).toEqual(['alpha', 'gamma']);
    expect(selectionRoundsView(legacy)[0]?.approvals[0]?.labels).toEqual(['alpha', 'gamma']);
    const applied = await answerSelection(h.deps, job.id, ['r1', 'r3'], { via: 'api', by: 'bob' });
    expect(selectionRoundsView(applied)[0]?.approvals.map((a) => [a.role, choiceText(a)])).toEqual([
      ['first approver', 'alpha (r1), gamma (r3)'],
      ['second approver', 'alpha (r1), gamma (r3)'],
    ]);
    // Once answered, an unlabelled record has no offer to look in: the ids alone, never a wrong label.
    const old = { ...applied, answers: applied.answers!.map(({ labels: _labels, ...answer }) => answer) };
    expect(choiceText({ ...old.answers![1]!, labels: answerLabels(old.answers![1]!, old.pending) })).toBe(
      'r1, r3',
    );
    expect(answerLabels(old.answers![1]!, old.pending)).toBeUndefined();
  });
});

// The FTO search, specification drafting, feasibility analysis and translation on AWS, end to end:
// each job created through the API, run by the bundled step worker under a simulated SQS event
// source against the sandbox, its selection points answered through the API (manual), and its
// report (Markdown, HTML, result.json) kept in S3 (the emulator) and linked through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, PendingSelection } from '../../../shared/engine/job-record';
import { workflows } from '../../../shared/workflows';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';
import { reportOf } from './ip-reports';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start();
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const exampleOf = (name: string) => {
  const example = workflows.get(name)?.example;
  if (!example) throw new Error(`workflow ${name} has no example`);
  return example;
};

/** Runs a job to its end, answering every selection through the API with the first options it may take. */
async function runToEnd(body: Record<string, unknown>): Promise<{ job: Job; answered: string[] }> {
  const id = await world.submit({ ...body, selection: { mode: 'manual' } });
  let job = (await world.settle([id]))[0]!;
  const answered: string[] = [];
  while (job.status === 'AWAITING_INPUT') {
    const shown = await world.api('GET', `/jobs/${id}`);
    const pending = (shown.body.job as { pending: PendingSelection }).pending;
    expect(pending.options.length).toBeGreaterThan(0);
    const chosen = pending.options.slice(0, Math.max(1, pending.min)).map((option) => option.id);
    const accepted = await world.api('POST', `/jobs/${id}/selection`, { body: { selected: chosen } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    answered.push(pending.step);
    job = (await world.settle([id]))[0]!;
  }
  return { job, answered };
}

describe('opflow on AWS: the FTO search and the drafting, feasibility and translation workflows', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it('runs an FTO search with a patent to compare and both selection points answered through the API, its report in S3', async () => {
    const input = { ...exampleOf('fto'), comparePatents: ['CN118289111A'] };
    const { job, answered } = await runToEnd({ workflow: 'fto', input });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(answered).toEqual(['features', 'agent-result']);
    const { keys, markdown, result } = await reportOf(world, job.id);
    expect(result.job).toMatchObject({ id: job.id, workflow: 'fto', status: 'SUCCEEDED' });
    expect(Object.keys(result.steps)).toEqual(
      expect.arrayContaining(['agent-result', 'legal-status', 'family', 'compare-patent-1', 'create-report']),
    );
    // The patent named for comparison (ai66-8) is in the claim charts; the other places are left out.
    expect(markdown).toMatch(/### P\d+ · CN118289111A/);
    expect(result.steps['compare-patent-2']).toBeUndefined();
    // The platform's own report document is downloaded and kept beside opflow's.
    expect(keys.some((key) => key.startsWith(`reports/${job.id}/attachments/`))).toBe(true);
    expect(markdown).toMatch(/^# FTO search: /m);
    expect(markdown).toMatch(/claim/i);
  });

  it('drafts a specification with its selection answered through the API, its report in S3', async () => {
    const { job, answered } = await runToEnd({
      workflow: 'specification-drafting',
      input: exampleOf('specification-drafting'),
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(answered.length).toBeGreaterThanOrEqual(1);
    const { result, html } = await reportOf(world, job.id);
    expect(result.job).toMatchObject({ workflow: 'specification-drafting', status: 'SUCCEEDED' });
    expect(html).toContain('<html');
  });

  it('runs a feasibility analysis to SUCCEEDED, its report in S3', async () => {
    const { job } = await runToEnd({
      workflow: 'feasibility-analysis',
      input: exampleOf('feasibility-analysis'),
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { result, markdown } = await reportOf(world, job.id);
    expect(result.job).toMatchObject({ workflow: 'feasibility-analysis', status: 'SUCCEEDED' });
    expect(markdown.length).toBeGreaterThan(200);
  });

  it('translates a document in pieces to SUCCEEDED, the joined translation in S3', async () => {
    const { job } = await runToEnd({ workflow: 'translation', input: exampleOf('translation') });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { result, markdown } = await reportOf(world, job.id);
    expect(result.job).toMatchObject({ workflow: 'translation', status: 'SUCCEEDED' });
    expect(typeof result.answer).toBe('string');
    expect((result.answer as string).length).toBeGreaterThan(20);
    expect(markdown).toContain((result.answer as string).split('\n')[0]!.trim());
  });
});

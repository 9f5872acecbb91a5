/**
 * A task the upstream reports as failed fails its job clearly, whichever workflow and step: the
 * step, the kind, the operation and a message naming what failed and the upstream's status, not
 * retried. One sandbox; each row's input carries the sandbox trigger that fails that operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from './world';

const failures = [
  {
    workflow: 'novelty-check',
    what: 'the agent search',
    input: { text: 'A self-cleaning coating for solar panels.\n[sandbox:fail:ai35-8]' },
    error: {
      step: 'agent-result',
      operationId: 'ai35-8NoveltySearchAgentResult',
      message: 'the agent search failed upstream (task_status "failed")',
    },
  },
  {
    workflow: 'technical-disclosure',
    what: 'the extraction',
    input: { text: 'An idea. [sandbox:fail]' },
    error: { step: 'extract', message: expect.stringContaining('status "0"') },
  },
  {
    workflow: 'technical-disclosure',
    what: 'generating the document',
    input: { text: 'A second idea about heat pumps. [sandbox:fail:ai32-3]' },
    error: { step: 'download-link', message: expect.stringContaining('job_status 3') },
  },
  {
    workflow: 'pre-research-report',
    what: 'the report',
    input: { question: 'How can sodium-ion batteries store more energy? [sandbox:fail:ai34-3]' },
    error: { step: 'report', message: 'the report failed upstream (status "FAILED")' },
  },
];

describe('a task failed upstream', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it.each(failures)('$workflow fails clearly when $what fails', async ({ workflow, input, error }) => {
    const job = await world.run(workflow, input);
    expect(job.status).toBe('FAILED');
    expect(job.lastError).toMatchObject({ kind: 'upstream-failed', retryable: false, ...error });
  });
});

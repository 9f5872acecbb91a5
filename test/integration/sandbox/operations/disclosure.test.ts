/**
 * Technical disclosure (ai32-1 → ai32-2 → ai32-3) against the sandbox: extraction from the idea's
 * sentences, the export statuses, and a real .docx behind the download link.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

const IDEA =
  'A vehicle door opens automatically when the driver approaches with a phone. ' +
  'A detector finds the phone in a first zone and opens the door partly. In a second zone the door opens fully.';
const STEP_MS = 40_000;

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({ taskDurations: { 'ai32-2': { meanMs: STEP_MS, spreadMs: 0 } } });
});
afterEach(() => harness.close());

describe('technical disclosure', () => {
  it('extracts, generates, and serves a .docx', async () => {
    const extraction = await harness.ok('ai32-1', { tech_solution: IDEA });
    expect(extraction.status).toBe('1');
    expect(extraction.embodiment).toContain(
      'A detector finds the phone in a first zone and opens the door partly.',
    );
    expect(extraction.mechanism).toContain('Vehicle');

    const { job_id, status } = await harness.ok('ai32-2', {
      language: 'en',
      tech_solution: IDEA,
      mechanism: extraction.mechanism,
      background: extraction.background,
      tech_problem: extraction.tech_problem,
      outcome: extraction.outcome,
      embodiment: extraction.embodiment,
    });
    expect(status).toBe(1);
    expect(await harness.ok('ai32-3', { job_id })).toEqual({ job_id, job_status: 0 });
    harness.advance(STEP_MS / 2);
    expect(await harness.ok('ai32-3', { job_id })).toEqual({ job_id, job_status: 1 });
    harness.advance(STEP_MS / 2);
    const done = await harness.ok('ai32-3', { job_id });
    expect(done.job_status).toBe(2);
    expect(done.download_url).toMatch(
      new RegExp(`^${harness.sandbox.url}/files/[\\w-]+/disclosure-\\w+\\.docx$`),
    );

    const file = await harness.get(done.download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toContain('wordprocessingml');
    expect(file.body.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(file.body.includes(Buffer.from('word/document.xml'))).toBe(true);
  });

  it('answers status "0" from ai32-1 on [sandbox:fail] and job_status 3 on [sandbox:fail:ai32-3]', async () => {
    expect((await harness.ok('ai32-1', { tech_solution: `${IDEA} [sandbox:fail]` })).status).toBe('0');
    const { job_id } = await harness.ok('ai32-2', {
      language: 'cn',
      mechanism: 'm',
      tech_solution: `${IDEA} [sandbox:fail:ai32-3]`,
    });
    harness.advance(STEP_MS);
    expect(await harness.ok('ai32-3', { job_id })).toEqual({ job_id, job_status: 3 });
  });

  it('answers 404 for an unknown job id', async () => {
    const answer = await harness.call('ai32-3', { job_id: 'missing-job' });
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ status: false, error_code: PlatformCode.notFound });
  });
});

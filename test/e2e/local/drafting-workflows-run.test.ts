// The platform's drafting and analysis workflows through the real bin against the built-in sandbox:
// `opflow run <workflow> <file>` as a user runs it, then the report and result.json it leaves.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';

interface JobSummary {
  id: string;
  label: string;
  status: string;
  workflow: string;
}

const latch = `# Quick-release drone battery latch

Docket: DRN-2026-014
Inventors: Jane Roe, John Doe

## Technical field
Battery mounts of unmanned aerial vehicles.

## Background
Swapping the battery of an inspection drone needs a tool. A loose battery is not detected before take-off.

## Solution
A spring-loaded pawl engages a notch in the battery housing; a release lever frees it with one hand.

## Claims
1. A battery latch for a drone, comprising: a spring-loaded pawl engaging a notch of the battery housing; a release lever disengaging the pawl; and a hall sensor detecting the position of the pawl.
2. The battery latch of claim 1, wherein the flight controller refuses to arm the motors while the hall sensor reports the latch open.
`;

describe('drafting workflows through the real bin (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });
  const run = async (workflow: string, file: string): Promise<JobSummary> => {
    const result = await opflow('run', workflow, file, '--json');
    expect(result.code, result.stderr).toBe(0);
    const output = JSON.parse(result.stdout) as { jobs: JobSummary[] };
    expect(output.jobs).toHaveLength(1);
    return output.jobs[0]!;
  };
  const reportOf = (job: JobSummary) => ({
    markdown: readFileSync(join(dir, 'opflow-out', job.id, 'report.md'), 'utf8'),
    result: JSON.parse(readFileSync(join(dir, 'opflow-out', job.id, 'result.json'), 'utf8')),
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-drafting-'));
    env = childEnv({ OPFLOW_SANDBOX_SPEED: '300' });
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('specification-drafting: a disclosure form with a Claims section becomes a drafted specification', async () => {
    writeFileSync(join(dir, 'latch.md'), latch);
    const job = await run('specification-drafting', 'latch.md');
    expect(job).toMatchObject({ workflow: 'specification-drafting', status: 'SUCCEEDED' });
    expect(job.label).toBe('DRN-2026-014 · latch.md');
    const { markdown, result } = reportOf(job);
    expect(markdown.split('\n')[0]).toBe('# Specification: Quick-release drone battery latch');
    expect(markdown).toContain('**Sandbox data: not real publications.**');
    expect(markdown.indexOf('## Specification document')).toBeLessThan(
      markdown.indexOf('## Claims as drafted'),
    );
    expect(markdown).toMatch(/\| 2 \| 1 \| The battery latch of claim 1/);
    // The form's front matter stays with the job; the claims keep their numbers.
    expect(result.input.claims).toMatch(/^1\. A battery latch/);
    expect(result.input.claims).toContain('\n2. The battery latch of claim 1');
    expect(JSON.stringify(result.input)).not.toContain('Jane Roe');
    expect(result.attachments[0].fileName).toMatch(/\.docx$/);
    expect(
      readFileSync(join(dir, 'opflow-out', job.id, 'attachments', result.attachments[0].fileName))
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');

    const listed = await opflow('workflows', 'specification-drafting');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('ai37-1');
    expect(listed.stdout).toContain('claims');
  }, 180_000);

  it('feasibility-analysis: a solution in a text file becomes an assessment PDF, listed first', async () => {
    writeFileSync(
      join(dir, 'egg-sleeve.md'),
      '# Impact-absorbing egg sleeve\n\nWrap each egg in a soft layer of sponge or bubble wrap, held by a paper sleeve, so it survives a fall of one metre.\n',
    );
    const job = await run('feasibility-analysis', 'egg-sleeve.md');
    expect(job).toMatchObject({ workflow: 'feasibility-analysis', status: 'SUCCEEDED' });
    const { markdown, result } = reportOf(job);
    expect(markdown.split('\n')[0]).toBe('# Feasibility analysis: Impact-absorbing egg sleeve');
    expect(markdown).toContain('**Sandbox data: not real publications.**');
    expect(markdown.indexOf('## Assessment')).toBeLessThan(markdown.indexOf('## Solution assessed'));
    expect(result.input.text).toMatch(/^Wrap each egg/);
    const pdf = readFileSync(join(dir, 'opflow-out', job.id, 'attachments', result.attachments[0].fileName));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  }, 180_000);

  it('translation: a disclosure translated in pieces, the translation in report.md and result.json', async () => {
    const body = Array.from(
      { length: 6 },
      (_, index) =>
        `Section ${index + 1}. ${'The release lever frees the pawl with one hand, and the hall sensor reports the latch. '.repeat(5).trimEnd()}`,
    ).join('\n\n');
    writeFileSync(join(dir, 'latch-en.md'), `# Battery latch\n\n${body}\n`);
    const job = await run('translation', 'latch-en.md');
    expect(job).toMatchObject({ workflow: 'translation', status: 'SUCCEEDED' });
    const { markdown, result } = reportOf(job);
    expect(markdown.split('\n')[0]).toBe('# Translation (detected → en): Battery latch');
    expect(result.usage.calls).toBeGreaterThanOrEqual(2);
    expect(Object.keys(result.steps)).toEqual(['piece-1', 'piece-2']);
    expect(result.answer.split('\n\n').length).toBeGreaterThanOrEqual(6);
    expect(markdown.indexOf('## Translation')).toBeLessThan(markdown.indexOf('## Source text'));
  }, 180_000);
});

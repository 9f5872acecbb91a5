/**
 * The prior-art cut-off, through the real bin against the built-in sandbox: a novelty check given
 * the disclosure's priority date searches up to it, and a reference published after it is never
 * rated X or Y: the report shows it apart, under "Published after the priority date".
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflows } from '../../../shared/workflows';

const workflowExamples = Object.fromEntries(
  [...workflows].map(([name, workflow]) => [name, workflow.example]),
);

import { childEnv, killRunningOpflows, runOpflow } from '../local/opflow-process';

describe('the prior-art cut-off of a novelty check', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-cutoff-'));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('searches up to the priority date and shows later documents apart, never X or Y', async () => {
    // The sandbox dates its references from 2001 on: with a priority date in 2010 some fall after it.
    const cutoff = '2010-06-30';
    writeFileSync(
      join(dir, 'input.json'),
      JSON.stringify({ ...workflowExamples['novelty-check'], pbdStart: undefined, priorityDate: cutoff }),
    );
    const run = await opflow('run', 'novelty-check', 'input.json', '--json');
    expect(run.code, run.stderr).toBe(0);
    const job = JSON.parse(run.stdout).jobs[0];
    const markdown = readFileSync(join(dir, 'out', job.id, 'report.md'), 'utf8');
    expect(markdown).toMatch(/Searched: publications up to 2010-06-30 \(the priority date\)/);
    const section = markdown.split('## Published after the priority date')[1]?.split('\n## ')[0];
    expect(section, 'the report has the section of later documents').toBeDefined();
    const late = [...section!.matchAll(/^\| (D\d+) \| .* \| (\d{4}-\d{2}-\d{2}) \| [^|]* \|$/gm)];
    expect(late.length).toBeGreaterThan(0);
    for (const [, , published] of late) expect(published! > cutoff).toBe(true);
    // None of them is in the matrix or rated X or Y in the references table.
    const matrixHeader = markdown.split('\n').find((line) => line.startsWith('| Id | Feature |')) ?? '';
    const references = markdown.split('## References')[1]?.split('\n## ')[0] ?? '';
    for (const [, label] of late) {
      expect(matrixHeader).not.toContain(`${label} (`);
      expect(references).not.toMatch(new RegExp(`^\\| ${label} \\|`, 'm'));
    }
    // The references kept are on or before the cut-off.
    for (const row of references.matchAll(/^\| D\d+ \| .*? \| .*? \| .*? \| (\d{4}-\d{2}-\d{2}|—) \|/gm))
      if (row[1] !== '—') expect(row[1]! <= cutoff).toBe(true);
  }, 180_000);
});

// The README's main command, through the real bin as a user runs it: `opflow run novelty-check
// examples/disclosures` against the built-in sandbox, then list, status and report on its jobs.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from './opflow-process';

interface JobSummary {
  id: string;
  label: string;
  status: string;
  workflow: string;
  report?: string;
  usage: { calls: number };
}

describe('opflow run novelty-check examples/disclosures (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let jobs: JobSummary[];
  let runStderr: string;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-run-'));
    // Only the speed is turned up; database and reports go to their defaults under the working folder.
    env = childEnv({ OPFLOW_SANDBOX_SPEED: '300' });
    const result = await opflow('run', 'novelty-check', join(repoRoot, 'examples', 'disclosures'), '--json');
    runStderr = result.stderr;
    expect(result.code, result.stderr).toBe(0);
    const output = JSON.parse(result.stdout) as { jobs: JobSummary[]; refused: unknown[] };
    expect(output.refused).toEqual([]);
    jobs = output.jobs;
  }, 120_000);
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs one job per disclosure, every one to SUCCEEDED, saying once that it uses the sandbox', () => {
    expect(jobs.map((job) => job.label).sort()).toEqual([
      'heat-pump-dryer_condensate-heat-recovery.txt',
      'hot-swap-battery-inspection-drone.md',
      'low-power-soil-moisture-sensor.json',
      'predictive-regenerative-braking-e-bike.md',
      'self-cleaning-solar-panel-coating.md',
      'smart-insulin-pen-cap.txt',
    ]);
    for (const job of jobs) expect(job).toMatchObject({ workflow: 'novelty-check', status: 'SUCCEEDED' });
    expect(runStderr.match(/using the built-in sandbox/g)).toHaveLength(1);
    expect(existsSync(join(dir, '.opflow', 'opflow.db'))).toBe(true);
  });

  it('writes each report under ./opflow-out/<jobId>/ with the disclosure, its features and references', () => {
    for (const job of jobs) {
      expect(job.report).toBe(join(dir, 'opflow-out', job.id, 'report.html'));
      const markdown = readFileSync(join(dir, 'opflow-out', job.id, 'report.md'), 'utf8');
      const result = JSON.parse(readFileSync(join(dir, 'opflow-out', job.id, 'result.json'), 'utf8'));
      expect(Object.keys(result.steps)).toEqual(
        expect.arrayContaining(['submit', 'summary', 'features', 'search-elements', 'agent-result']),
      );
      expect(result.usage.calls).toBeGreaterThanOrEqual(10);
      expect(result.attachments).toHaveLength(1);
      expect(existsSync(join(dir, 'opflow-out', job.id, 'attachments', result.attachments[0].fileName))).toBe(
        true,
      );
      expect(readFileSync(join(dir, 'opflow-out', job.id, 'report.html'), 'utf8')).toContain('<html');
      expect(markdown.length).toBeGreaterThan(500);
    }
    const drone = jobs.find((job) => job.label === 'hot-swap-battery-inspection-drone.md')!;
    const markdown = readFileSync(join(dir, 'opflow-out', drone.id, 'report.md'), 'utf8');
    expect(markdown).toContain('Inspection drone with a hot-swappable battery');
    const soil = jobs.find((job) => job.label === 'low-power-soil-moisture-sensor.json')!;
    const soilResult = JSON.parse(readFileSync(join(dir, 'opflow-out', soil.id, 'result.json'), 'utf8'));
    expect(soilResult.input).toMatchObject({
      title: expect.stringContaining('Capacitive soil moisture probe'),
      pbdStart: '2012-01-01',
    });
  });

  it('lists the jobs, as a table and as JSON, filtered by status', async () => {
    const table = await opflow('list');
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^JOB\s+WORKFLOW\s+STATUS\s+STEP\s+UPDATED \(UTC\)\s+UPSTREAM\s+LABEL$/,
    );
    for (const job of jobs) expect(table.stdout).toContain(job.id);
    const succeeded = JSON.parse(
      (await opflow('list', '--status', 'succeeded', '--json')).stdout,
    ) as JobSummary[];
    expect(succeeded.map((job) => job.id).sort()).toEqual(jobs.map((job) => job.id).sort());
    expect(JSON.parse((await opflow('list', '--status', 'FAILED', '--json')).stdout)).toEqual([]);
    const limited = JSON.parse((await opflow('list', '--limit', '2', '--json')).stdout) as JobSummary[];
    expect(limited).toHaveLength(2);
  });

  it('shows one job in full with status, as text and as JSON', async () => {
    const job = jobs[0]!;
    const text = await opflow('status', job.id);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`job       ${job.id}`);
    expect(text.stdout).toContain('status    SUCCEEDED');
    expect(text.stdout).toContain(`report    ${job.report}`);
    const json = JSON.parse((await opflow('status', job.id, '--json')).stdout);
    expect(json).toMatchObject({
      id: job.id,
      status: 'SUCCEEDED',
      workflow: 'novelty-check',
      report: job.report,
    });
    expect(json.usage.calls).toBe(job.usage.calls);
  });

  it('says where the report is, or prints it', async () => {
    const job = jobs.find((candidate) => candidate.label === 'smart-insulin-pen-cap.txt')!;
    const where = await opflow('report', job.id);
    expect(where.code).toBe(0);
    expect(where.stdout).toContain(`report    ${join(dir, 'opflow-out', job.id, 'report.html')}`);
    expect(where.stdout).toContain(`markdown  ${join(dir, 'opflow-out', job.id, 'report.md')}`);
    expect(where.stdout).toMatch(/attached {2}.*attachments/);
    const printed = await opflow('report', job.id, '--print');
    expect(printed.stdout).toBe(readFileSync(join(dir, 'opflow-out', job.id, 'report.md'), 'utf8'));
    expect(printed.stdout).toContain('Replaceable cap for disposable insulin pens');
    const data = JSON.parse((await opflow('report', job.id, '--print', '--format', 'json')).stdout);
    expect(data.job.id).toBe(job.id);
    const links = JSON.parse((await opflow('report', job.id, '--json')).stdout);
    expect(links).toMatchObject({ id: job.id, status: 'SUCCEEDED', html: job.report });
  });

  it('reads a disclosure from standard input with -', async () => {
    const result = await runOpflow(['run', 'novelty-check', '-', '--json'], {
      env,
      cwd: dir,
      stdin:
        '# Collapsible silicone kettle\nA travel kettle whose silicone wall folds flat; a stainless base carries the heater.',
    });
    expect(result.code, result.stderr).toBe(0);
    const [job] = JSON.parse(result.stdout).jobs as JobSummary[];
    expect(job).toMatchObject({ label: 'stdin', status: 'SUCCEEDED' });
    expect(readFileSync(join(dir, 'opflow-out', job!.id, 'report.md'), 'utf8')).toContain(
      'Collapsible silicone kettle',
    );
  }, 60_000);
});

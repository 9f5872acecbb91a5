// Selections, cancellation and deadlines through the real bin: `--select manual` parks a job until
// `opflow resume <jobId> --select ...` answers it; `opflow cancel` stops one; a deadline fails one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, type OpflowProcess, runOpflow, startOpflow } from './opflow-process';

/** What the process has printed on standard error so far. */
async function readStderrSoFar(run: OpflowProcess): Promise<string> {
  return run.stderrSoFar();
}

const disclosure = `# Folding bicycle helmet
A bicycle helmet made of six rigid shell segments joined by textile hinges, so that it folds flat to the
size of a book. A magnetic buckle locks the segments in the open shape; an impact liner of expanded
polypropylene is split along the same lines as the shell.`;

describe('selections, cancellation and deadlines (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-jobs-'));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
    });
    writeFileSync(join(dir, 'helmet.md'), disclosure);
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('parks a manual job at the features, refuses a wrong answer, and finishes with the chosen ones', async () => {
    // The built-in sandbox holds the job's tasks, so the run keeps it alive and waits for the answer,
    // which comes from another opflow process that joins the same sandbox.
    const run = startOpflow(['run', 'novelty-check', 'helmet.md', '--select', 'manual', '--json'], {
      env,
      cwd: dir,
    });
    await run.waitForLines(/answer with: opflow resume \S+ --select/, 1);
    const id = /opflow resume (\S+) --select/.exec((await readStderrSoFar(run)) ?? '')?.[1];
    expect(id).toBeDefined();

    const status = JSON.parse((await opflow('status', id!, '--json')).stdout);
    expect(status.status).toBe('AWAITING_INPUT');
    expect(status.pending.prompt).toBe('Which technical features should the novelty search compare?');
    const options = status.pending.options as { id: string }[];
    expect(options.length).toBeGreaterThanOrEqual(2);
    const text = await opflow('status', id!);
    expect(text.stdout).toContain(`answer with: opflow resume ${id} --select`);

    const asked = await opflow('resume', id!);
    expect(asked.code).toBe(3);
    expect(asked.stdout).toContain(options[0]!.id);

    const wrong = await opflow('resume', id!, '--select', 'f1,not-an-option');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('not-an-option');
    expect(JSON.parse((await opflow('status', id!, '--json')).stdout).status).toBe('AWAITING_INPUT');

    const chosen = options.slice(0, 2).map((option) => option.id);
    const answered = await opflow('resume', id!, '--select', chosen.join(','), '--json');
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stderr).toMatch(/using the built-in sandbox of opflow process \d+/);
    expect(JSON.parse(answered.stdout).jobs[0]).toMatchObject({ id, status: 'SUCCEEDED' });

    const first = await run.done;
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).jobs[0]).toMatchObject({ id, status: 'SUCCEEDED' });
    const result = JSON.parse(readFileSync(join(dir, 'reports', id!, 'result.json'), 'utf8'));
    expect(result.selections.features).toEqual(chosen);
  }, 90_000);

  it('with a platform that keeps its tasks, a manual run exits at the selection and resume finishes it', async () => {
    const sandbox = await startSandbox({
      port: 0,
      taskDurations: scaledTaskDurations(300),
      defaultTaskDuration: { meanMs: 30, spreadMs: 10 },
    });
    try {
      const external = { ...env, OPFLOW_BASE_URL: sandbox.url };
      const parked = await runOpflow(['run', 'novelty-check', 'helmet.md', '--select', 'manual', '--fresh'], {
        env: external,
        cwd: dir,
      });
      expect(parked.code, parked.stderr).toBe(3);
      const id = /opflow resume (\S+) --select/.exec(parked.stdout)?.[1];
      expect(parked.stdout).toContain('waits for a selection: Which technical features');
      const answered = await runOpflow(['resume', id!, '--select', 'f1', '--json'], {
        env: external,
        cwd: dir,
      });
      expect(answered.code, answered.stderr).toBe(0);
      expect(JSON.parse(answered.stdout).jobs[0]).toMatchObject({ id, status: 'SUCCEEDED' });
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it('cancels a job waiting for a selection, once, and it has no report', async () => {
    const run = startOpflow(
      ['run', 'novelty-check', 'helmet.md', '--select', 'manual', '--fresh', '--json'],
      {
        env,
        cwd: dir,
      },
    );
    await run.waitForLines(/answer with: opflow resume \S+ --select/, 1);
    const id = /opflow resume (\S+) --select/.exec(run.stderrSoFar())?.[1];
    const cancelled = await opflow('cancel', id!);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(
      `cancelled ${id} (helmet.md) while it waited for a selection ("Which technical features should the novelty search compare?")`,
    );
    // The run that was waiting for the answer sees the cancellation and ends.
    const first = await run.done;
    expect(first.code).toBe(1);
    expect(JSON.parse(first.stdout).jobs[0]).toMatchObject({ id, status: 'CANCELLED' });

    const again = await opflow('cancel', id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already CANCELLED');
    expect(JSON.parse((await opflow('status', id!, '--json')).stdout).status).toBe('CANCELLED');
    const report = await opflow('report', id!);
    expect(report.code).toBe(4);
    expect(report.stderr).toContain(`job ${id} has no report: it is CANCELLED`);
    // A cancelled job is finished: resume has nothing more to do with it.
    const resumed = await opflow('resume', id!);
    expect(resumed.code).toBe(1);
    expect(resumed.stdout).toContain('already CANCELLED');
  }, 60_000);

  it('fails a job that passes its deadline, saying so', async () => {
    // At 30x the whole check takes about fifteen seconds: two are not enough.
    const result = await opflow(
      'run',
      'novelty-check',
      'helmet.md',
      '--deadline',
      '2s',
      '--sandbox-speed',
      '30',
      '--fresh',
      '--json',
    );
    expect(result.code).toBe(1);
    const [job] = JSON.parse(result.stdout).jobs;
    expect(job.status).toBe('FAILED');
    expect(job.error).toMatchObject({ kind: 'deadline', retryable: false });
    const status = await opflow('status', job.id);
    expect(status.stdout).toContain('the job passed its deadline');

    // Retried with more time, it continues from the step it stopped at and succeeds; one run is kept.
    const retried = await opflow('retry', job.id, '--deadline', '10m', '--json');
    expect(retried.code, retried.stderr).toBe(0);
    const [again] = JSON.parse(retried.stdout).jobs;
    expect(again).toMatchObject({ id: job.id, status: 'SUCCEEDED' });
    expect(again.runs).toEqual([
      expect.objectContaining({
        status: 'FAILED',
        step: job.step,
        error: expect.objectContaining({ kind: 'deadline' }),
      }),
    ]);
    const refused = await opflow('retry', job.id, '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.message).toMatch(/cannot be retried: it SUCCEEDED/);
  }, 90_000);
});

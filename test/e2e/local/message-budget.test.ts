// The runaway guard as a user meets it, through the real bin: a budget of messages per job
// (OPFLOW_JOB_MESSAGE_BUDGET) far below what a novelty check needs stops the job loudly, with the
// reason and the count in `opflow status`; the default budget lets the same job finish.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from './opflow-process';

interface Summary {
  id: string;
  status: string;
  messages: number;
  error?: { kind: string; message: string };
}

const disclosure = join(repoRoot, 'examples', 'disclosures', 'smart-insulin-pen-cap.txt');

describe('the per-job message budget, through opflow run and status', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-budget-'));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });
  const opflow = (env: Record<string, string>, ...args: string[]) =>
    runOpflow(args, { env: childEnv({ OPFLOW_SANDBOX_SPEED: '300', ...env }), cwd: dir });

  it('fails a job at its budget with kind message-budget, and status shows the count', async () => {
    const run = await opflow(
      { OPFLOW_JOB_MESSAGE_BUDGET: '4' },
      'run',
      'novelty-check',
      disclosure,
      '--json',
    );
    const [job] = (JSON.parse(run.stdout) as { jobs: Summary[] }).jobs;
    expect(job).toMatchObject({ status: 'FAILED', messages: 4, error: { kind: 'message-budget' } });
    expect(job?.error?.message).toMatch(/sent 4 messages, its budget \(OPFLOW_JOB_MESSAGE_BUDGET, 4\)/);

    const status = await opflow({}, 'status', job!.id);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^status\s+FAILED$/m);
    expect(status.stdout).toMatch(/^messages\s+4 sent to move the job on$/m);
    expect(status.stdout).toMatch(/kind message-budget; a retry would not help/);
  }, 120_000);

  it('lets the same job finish under the default budget, counting its messages', async () => {
    const run = await opflow({}, 'run', 'novelty-check', disclosure, '--json');
    expect(run.code, run.stderr).toBe(0);
    const [job] = (JSON.parse(run.stdout) as { jobs: Summary[] }).jobs;
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.messages).toBeGreaterThan(8);
    expect(job?.messages).toBeLessThan(100);
  }, 120_000);

  it('refuses a budget that is not a whole number above 0, naming the variable', async () => {
    const run = await opflow({ OPFLOW_JOB_MESSAGE_BUDGET: 'many' }, 'run', 'novelty-check', disclosure);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /OPFLOW_JOB_MESSAGE_BUDGET must be a whole number of messages above 0, got "many"/,
    );
  }, 120_000);
});

// Resume through the real bin: `opflow resume` says what it continues;
// `resume <id> --json` prints JSON whatever the job's state (waiting for a selection: exit 3).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';

describe('opflow resume', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-resume-json-'));
    sandbox = await startSandbox({ seed: 4, taskDurations: scaledTaskDurations(300), streamChunkDelayMs: 0 });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'opflow.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says what it continues, and answers --json for a finished job', { timeout: 180_000 }, async () => {
    const created = await runOpflow(['--json', 'run', '--no-wait', 'patent-count', '-'], {
      env,
      cwd: dir,
      stdin: 'TTL:(folding hinge)',
    });
    expect(created.code, created.stderr).toBe(0);
    const jobId = (JSON.parse(created.stdout) as { jobs: { id: string }[] }).jobs[0]!.id;

    const resumed = await runOpflow(['resume'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/continuing 1 unfinished job \(1 patent-count\): /);

    const again = await runOpflow(['resume', jobId, '--json'], { env, cwd: dir });
    expect(again.code).toBe(0);
    const answer = JSON.parse(again.stdout) as { jobs: { id: string; status: string }[]; message: string };
    expect(answer.jobs[0]).toMatchObject({ id: jobId, status: 'SUCCEEDED' });
    expect(answer.message).toMatch(/already SUCCEEDED/);
  });

  it('prints a job waiting for a selection as JSON with exit 3', { timeout: 240_000 }, async () => {
    const input = join(dir, 'helmet.json');
    writeFileSync(input, JSON.stringify({ problem: 'How can hinge wear be reduced in folding helmets?' }));
    const run = await runOpflow(['--json', 'run', '--select', 'manual', 'find-solution', input], {
      env,
      cwd: dir,
    });
    expect(run.code, run.stderr).toBe(3);
    const jobId = (JSON.parse(run.stdout) as { jobs: { id: string }[] }).jobs[0]!.id;

    const waiting = await runOpflow(['resume', jobId, '--json'], { env, cwd: dir });
    expect(waiting.code).toBe(3);
    const answer = JSON.parse(waiting.stdout) as {
      awaitingSelection: string[];
      pending: { options: { id: string }[] };
      exitCode: number;
    };
    expect(answer.awaitingSelection).toEqual([jobId]);
    expect(answer.pending.options.length).toBeGreaterThan(0);
    expect(answer.exitCode).toBe(3);

    // With no id, a job waiting for a person ends the command with exit 3 instead of blocking.
    const all = await runOpflow(['--json', 'resume'], { env, cwd: dir });
    expect(all.code).toBe(3);
    expect((JSON.parse(all.stdout) as { awaitingSelection: string[] }).awaitingSelection).toContain(jobId);
  });

  it('with the built-in sandbox, resume without an id ends at a selection (exit 3) and says how to answer', {
    timeout: 240_000,
  }, async () => {
    // No OPFLOW_BASE_URL: the built-in sandbox, its tasks kept in sandbox-state.json beside the database.
    const builtIn = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'built-in', 'opflow.db'),
      OPFLOW_OUT: join(dir, 'built-in-out'),
    });
    // novelty-check asks one selection (the features); find-solution would ask a second one, which
    // `resume <id> --select` waits for with the sandbox kept (it hosts the job until it finishes).
    const input = join(dir, 'helmet.md');
    writeFileSync(
      input,
      '# Folding helmet hinge\n\nA folding bicycle helmet whose shell segments pivot on a polymer hinge with a steel pin and a detent that locks the unfolded position.\n',
    );
    const created = await runOpflow(
      ['--json', 'run', '--no-wait', '--select', 'manual', 'novelty-check', input],
      { env: builtIn, cwd: dir },
    );
    expect(created.code, created.stderr).toBe(0);
    const jobId = (JSON.parse(created.stdout) as { jobs: { id: string }[] }).jobs[0]!.id;

    const resumed = await runOpflow(['resume'], { env: builtIn, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(resumed.stdout).toMatch(/1 waiting for a selection/);
    expect(resumed.stdout).toContain(`opflow resume ${jobId} --select`);
    const status = JSON.parse(
      (await runOpflow(['status', jobId, '--json'], { env: builtIn, cwd: dir })).stdout,
    );
    expect(status.status).toBe('AWAITING_INPUT');
    const option = (status.pending.options as { id: string }[])[0]!.id;

    // A later process continues it from the sandbox's state file once answered.
    const answered = await runOpflow(['resume', jobId, '--select', option, '--json'], {
      env: builtIn,
      cwd: dir,
    });
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout).jobs[0]).toMatchObject({ id: jobId, status: 'SUCCEEDED' });
  });
});

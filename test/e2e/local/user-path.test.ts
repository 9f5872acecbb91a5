// What a new user meets, through the real bin: the workflows described, the example every
// workflow accepts, a done input skipped unless --fresh, and --json answers that carry their errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from './opflow-process';

describe('the new user path (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-user-'));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
    });
    writeFileSync(join(dir, 'too-long.json'), JSON.stringify({ problem: 'x'.repeat(600) }));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('describes each workflow from its schema, as text and as JSON', async () => {
    const help = await opflow('help', 'find-solution');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /problem\s+string\s+required; not empty; at most 500 characters; also accepted as "text"/,
    );
    expect(help.stdout).toContain('create the task  (ai33-1, ai33-1Step1V3)');
    const all = JSON.parse((await opflow('workflows', '--json')).stdout);
    expect(all.workflows.map((w: { name: string }) => w.name)).toContain('technical-disclosure');
    const unknown = await opflow('workflows', 'find-solutions', '--json');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error.message).toMatch(
      /unknown workflow "find-solutions" \(did you mean find-solution\?\)/,
    );
  }, 60_000);

  it('skips an input already done unless --fresh, and says so', async () => {
    const example = join(repoRoot, 'examples', 'any-workflow.json');
    const first = await opflow('run', 'patent-count', example, '--json');
    expect(first.code, first.stderr).toBe(0);
    const [done] = JSON.parse(first.stdout).jobs;
    expect(done.status).toBe('SUCCEEDED');

    const again = await opflow('run', 'patent-count', example, '--json');
    expect(again.code, again.stderr).toBe(0);
    const answer = JSON.parse(again.stdout);
    expect(answer.skipped).toEqual([{ source: example, jobId: done.id }]);
    expect(answer.jobs.map((job: { id: string }) => job.id)).toEqual([done.id]);
    expect(again.stderr).toMatch(/1 input is already done, not run again \(--fresh runs it again\)/);

    const fresh = await opflow('run', 'patent-count', example, '--fresh', '--json');
    expect(fresh.code, fresh.stderr).toBe(0);
    const [rerun] = JSON.parse(fresh.stdout).jobs;
    expect(rerun.id).not.toBe(done.id);
    expect(JSON.parse(fresh.stdout).skipped).toEqual([]);
  }, 90_000);

  it('puts the reason of a refused input in the --json answer', async () => {
    const refused = await opflow('run', 'find-solution', 'too-long.json', '--json');
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error.message).toMatch(
      /too-long.json: invalid input for find-solution: input.problem: problem: at most 500 characters/,
    );
  }, 60_000);
});

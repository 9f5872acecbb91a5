// A job failed on its deadline: `opflow status` says a retry with a new deadline helps (not "a retry
// would not help"), through the real bin/opflow.js.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from './opflow-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-deadline-advice-'));
writeFileSync(join(dir, 'd.md'), 'A hinge that folds twice and locks.\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = () => childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out') });

describe('a deadline failure', () => {
  it('opflow status says opflow retry runs it again with a new deadline', async () => {
    const run = await runOpflow(['run', 'technical-disclosure', 'd.md', '--deadline', '2s', '--json'], {
      env: env(),
      cwd: dir,
    });
    expect(run.code, run.stderr).toBe(1);
    const jobId = (JSON.parse(run.stdout) as { jobs: { id: string }[] }).jobs[0]!.id;
    const status = await runOpflow(['status', jobId], { env: env(), cwd: dir });
    expect(status.stdout).toContain('the job passed its deadline');
    expect(status.stdout).toContain(`kind deadline; opflow retry ${jobId} runs it again with a new deadline`);
    expect(status.stdout).not.toContain('a retry would not help');
  }, 60_000);
});

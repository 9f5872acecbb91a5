// Through the real bin: a report folder that cannot be written once a paid call has
// answered does not fail the job for good, and `opflow resume` finishes it once the folder is fixed,
// with no create sent again (the sandbox's ledger says so). An unusable --out / OPFLOW_OUT is
// refused before anything is called.
//
// The tests run as root here, where a read-only folder does not stop a write: the job's own
// `steps` folder is replaced by a regular file instead, which stops every user.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteJobStore } from '../../../shared/backends/local';
import type { Job } from '../../../shared/engine/job-record';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';

describe('a report folder that cannot be written', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;
  const dbPath = () => join(dir, 'state', 'opflow.db');
  const outDir = () => join(dir, 'out');

  const storedJob = async (id: string): Promise<Job | undefined> => {
    const db = openLocalDatabase(dbPath());
    try {
      return await new SqliteJobStore(db).get(id);
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-unwritable-'));
    sandbox = await startSandbox({ seed: 3, taskDurations: scaledTaskDurations(300), streamChunkDelayMs: 0 });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: dbPath(),
      OPFLOW_OUT: outDir(),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a file as --out or OPFLOW_OUT before any call, naming the flag or the variable', {
    timeout: 60_000,
  }, async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const before = sandbox.ledger.count();
    const byFlag = await runOpflow(['run', 'patent-count', '--out', file, '-'], {
      env,
      cwd: dir,
      stdin: 'TTL:(hinge)',
    });
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toContain(`--out: ${file} is a file, not a folder`);
    const byEnv = await runOpflow(['run', 'patent-count', '-'], {
      env: { ...env, OPFLOW_OUT: join(file, 'below') },
      cwd: dir,
      stdin: 'TTL:(hinge)',
    });
    expect(byEnv.code).toBe(5);
    expect(byEnv.stderr).toContain(`OPFLOW_OUT: ${file} is a file`);
    expect(byFlag.stderr + byEnv.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(sandbox.ledger.count()).toBe(before);
  });

  it('keeps a paid answer it could not store, and resume stores it without calling again', {
    timeout: 240_000,
  }, async () => {
    const input = join(dir, 'helmet.json');
    writeFileSync(input, JSON.stringify({ problem: 'How can hinge wear be reduced in folding helmets?' }));
    const created = await runOpflow(['--json', 'run', '--no-wait', 'find-solution', input], {
      env,
      cwd: dir,
    });
    expect(created.code, created.stderr).toBe(0);
    const jobId = (JSON.parse(created.stdout) as { jobs: { id: string }[] }).jobs[0]!.id;

    // The job's step data cannot be written: its `steps` folder is a file.
    mkdirSync(join(outDir(), jobId), { recursive: true });
    writeFileSync(join(outDir(), jobId, 'steps'), 'in the way');
    const broken = await runOpflow(['resume'], { env, cwd: dir });
    expect(broken.code).toBe(1);
    expect(broken.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    const kept = (await storedJob(jobId))!;
    expect(kept.status).toBe('FAILED');
    expect(kept.lastError).toMatchObject({ kind: 'storage', retryable: true, step: 'create' });
    expect(kept.lastError?.message).toMatch(/could not be stored \(E\w+/);
    expect(kept.unsaved?.step).toBe('create');
    const creates = () => sandbox.ledger.count({ operationId: 'ai33-1Step1V3' });
    expect(creates()).toBe(1);

    // Fixed: resume stores the kept answer and finishes the job, sending no create again.
    rmSync(join(outDir(), jobId, 'steps'));
    const fixed = await runOpflow(['resume'], { env, cwd: dir });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toContain('disk could not be written');
    const done = (await storedJob(jobId))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.unsaved).toBeUndefined();
    expect(creates()).toBe(1);
    expect(sandbox.ledger.duplicateCreates()).toBe(0);
    expect(done.usage.duplicateCreates).toBe(0);
  });
});

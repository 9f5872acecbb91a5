// A batch's totals follow its jobs, through the real bin and the job API: after `opflow retry` made a
// failed item succeed, `opflow batch` and GET /batches count it succeeded (and offer no redrive for
// it); while a batch runs, its calls and billed units include what its running jobs have used.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteBatchStore, SqliteJobStore } from '../../../shared/backends/local';
import type { Job } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, repoRoot, runOpflow, startOpflow } from './opflow-process';
import { startServe } from './serve-process';

const fast = ['--qps', '1000', '--concurrency', '16'];

interface BatchTotals {
  status: string;
  totals: { succeeded: number; failed: number; running: number; cancelled: number };
  calls: number;
  billedUnits: number;
  failures: number;
}

describe('batch totals', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;
  const dbPath = () => join(dir, 'state', 'jobs.db');
  const read = async <T>(what: (db: ReturnType<typeof openLocalDatabase>) => Promise<T> | T): Promise<T> => {
    const db = openLocalDatabase(dbPath());
    try {
      return await what(db);
    } finally {
      db.close();
    }
  };
  const jobs = (batchId: string) => read((db) => listAll(new SqliteJobStore(db), { batchId }));
  const usageOf = (list: Job[]) => ({
    calls: list.reduce((sum, job) => sum + job.usage.calls, 0),
    billedUnits: list.reduce((sum, job) => sum + job.usage.billedUnits, 0),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-batch-totals-'));
    sandbox = await startSandbox({ port: 0 });
    env = childEnv({ OPFLOW_BASE_URL: sandbox.url, OPFLOW_DB: dbPath(), OPFLOW_OUT: join(dir, 'out') });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts an item made to succeed by opflow retry as succeeded, in opflow batch and GET /batches', async () => {
    const lines = ['a', 'b', 'c'].map((name) => JSON.stringify({ id: name, query: `TTL:(lamp ${name})` }));
    writeFileSync(join(dir, 'lamps.jsonl'), `${lines.join('\n')}\n`);
    // A key the platform refuses: all three fail.
    const bad = await runOpflow(
      ['ingest', 'lamps.jsonl', '--workflow', 'patent-count', '--batch', 'lamps', ...fast],
      { env: { ...env, OPFLOW_API_KEY: 'sk-not-a-key-of-this-sandbox-000000' }, cwd: dir },
    );
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/items: 0 succeeded, 3 failed/);
    const [first] = await jobs('lamps');
    expect(first?.status).toBe('FAILED');

    const retried = await runOpflow(['retry', first!.id], { env, cwd: dir });
    expect(retried.code, retried.stderr).toBe(0);
    const after = await jobs('lamps');
    expect(after.filter((job) => job.status === 'SUCCEEDED').map((job) => job.id)).toEqual([first!.id]);
    const usage = usageOf(after);
    expect(usage.calls).toBeGreaterThan(0);

    const shown = await runOpflow(['batch', 'lamps'], { env, cwd: dir });
    expect(shown.stdout).toMatch(/items: 3: 1 succeeded, 2 failed, 0 cancelled, 0 running/);
    const json = await runOpflow(['batch', 'lamps', '--json'], { env, cwd: dir });
    const view = JSON.parse(json.stdout) as BatchTotals;
    expect(view).toMatchObject({
      status: 'FINISHED',
      totals: { succeeded: 1, failed: 2, running: 0 },
      failures: 2,
      calls: usage.calls,
      billedUnits: usage.billedUnits,
    });
    // The batch record itself: the retry took the job out of the failed count, and the end of its
    // run here was counted (the finished batch's outputs follow it), so nothing of it is in flight.
    const record = await read((db) => new SqliteBatchStore(db).get('lamps'));
    expect(record?.settled).toMatchObject({ succeeded: 1, failed: 2 });
    expect(record?.inFlight).toEqual([]);

    const { run: serve, url } = await startServe([], { env, cwd: dir });
    try {
      const one = (await (await fetch(`${url}/batches/lamps`)).json()) as { batch: BatchTotals };
      expect(one.batch).toMatchObject({ totals: { succeeded: 1, failed: 2 }, calls: usage.calls });
      const list = (await (await fetch(`${url}/batches`)).json()) as { batches: BatchTotals[] };
      expect(list.batches[0]).toMatchObject({ totals: { succeeded: 1, failed: 2 } });
      // A redrive runs only the two still failed.
      const redrive = await fetch(`${url}/batches/lamps/redrive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(((await redrive.json()) as { retried: unknown }).retried).toBe(2);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.done;
    }
  }, 180_000);

  it('shows the calls and billed units of a running batch as its jobs make them', async () => {
    const ingest = startOpflow(
      [
        'ingest',
        join(repoRoot, 'examples', 'manifests', 'disclosures.jsonl'),
        '--workflow',
        'novelty-check',
        '--batch',
        'running',
        '--sandbox-speed',
        '5',
      ],
      {
        env: childEnv({ OPFLOW_DB: join(dir, 'running', 'jobs.db'), OPFLOW_OUT: join(dir, 'out2') }),
        cwd: dir,
      },
    );
    const runningDb = join(dir, 'running', 'jobs.db');
    const runningJobs = async () => {
      const db = openLocalDatabase(runningDb);
      try {
        return await listAll(new SqliteJobStore(db), { batchId: 'running' });
      } finally {
        db.close();
      }
    };
    let before: Job[] = [];
    for (let i = 0; ; i++) {
      before = await runningJobs().catch(() => []);
      if (before.some((job) => job.usage.calls > 0) && before.every((job) => job.status !== 'SUCCEEDED'))
        break;
      if (i > 3_000) throw new Error(`no job made a call:\n${ingest.stderrSoFar()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const shown = await runOpflow(['batch', 'running', '--json'], {
      env: childEnv({ OPFLOW_DB: runningDb, OPFLOW_OUT: join(dir, 'out2') }),
      cwd: dir,
    });
    const after = await runningJobs();
    ingest.child.kill('SIGKILL');
    await ingest.done;
    const view = JSON.parse(shown.stdout) as BatchTotals;
    expect(['INGESTING', 'RUNNING']).toContain(view.status);
    // At least what the jobs had used (none finished) before the view was asked for, at most what they had used after.
    expect(view.calls).toBeGreaterThanOrEqual(usageOf(before).calls);
    expect(view.calls).toBeGreaterThan(0);
    expect(view.calls).toBeLessThanOrEqual(usageOf(after).calls);
  }, 120_000);
});

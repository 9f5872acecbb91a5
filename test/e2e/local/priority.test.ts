// A job's priority through the real bin: while `opflow ingest` runs a batch that saturates the key,
// `opflow run --priority high --no-wait` starts a job that runs ahead of the batch's waiting items
// (it cuts in at the next token), where a normal job started before it takes its place in line.
// Fair shares are off here, so that the waits measure the priority, not the shares (the fairness
// bench measures those). The key's bucket is shared by every process on the
// database, so whichever process runs a job, it stands in the same line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteJobStore } from '../../../shared/backends/local';
import type { Job } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { type LedgerEntry, type Sandbox, startSandbox } from '../../../shared/sandbox';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, killRunningOpflows, runOpflow, startOpflow } from './opflow-process';

describe('opflow run --priority high while a batch runs', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;
  const dbPath = () => join(dir, 'state', 'jobs.db');
  const allJobs = async (): Promise<Job[]> => {
    const db = openLocalDatabase(dbPath());
    try {
      return await listAll(new SqliteJobStore(db), {});
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-priority-'));
    sandbox = await startSandbox({ port: 0, ledgerBodies: true });
    env = childEnv({
      OPFLOW_SHARES: 'off',
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_DB: dbPath(),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'runs the high job ahead of the batch, and a normal one in line',
    async () => {
      const lines = Array.from({ length: 40 }, (_, i) =>
        JSON.stringify({ id: `q${i}`, query: `TTL:(lamp ${i})` }),
      );
      writeFileSync(join(dir, 'lamps.jsonl'), `${lines.join('\n')}\n`);
      writeFileSync(join(dir, 'urgent.json'), JSON.stringify({ query: 'TTL:(urgent lamp)' }));
      writeFileSync(join(dir, 'routine.json'), JSON.stringify({ query: 'TTL:(routine lamp)' }));
      // 40 one-call items at 2 calls/s: about 20 s of the key's budget.
      const batch = startOpflow(
        ['ingest', 'lamps.jsonl', '--workflow', 'patent-count', '--qps', '2', '--in-flight', '100'],
        { env, cwd: dir },
      );
      const deadline = Date.now() + 60_000;
      while ((await allJobs().catch(() => [])).filter((job) => job.status === 'SUCCEEDED').length < 5) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const wrong = await runOpflow(['run', 'patent-count', 'urgent.json', '--priority', 'urgent'], {
        env,
        cwd: dir,
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--priority must be one of high, normal, low, not "urgent"');
      for (const [file, priority] of [
        ['routine.json', 'normal'],
        ['urgent.json', 'high'],
      ] as const) {
        const started = await runOpflow(['run', 'patent-count', file, '--priority', priority, '--no-wait'], {
          env,
          cwd: dir,
        });
        expect(started.code, started.stderr).toBe(0);
      }
      const ended = await batch.done;
      expect(ended.code, ended.stderr).toBe(0);
      // The batch's process ran both (they were due in its database); one left when it ended is resumed.
      if ((await allJobs()).some((job) => job.status !== 'SUCCEEDED')) {
        const resumed = await runOpflow(['resume', '--qps', '2'], { env, cwd: dir });
        expect(resumed.code, resumed.stderr).toBe(0);
      }
      const jobs = await allJobs();
      expect(jobs.every((job) => job.status === 'SUCCEEDED')).toBe(true);
      const high = jobs.find((job) => job.label === 'urgent.json');
      const normal = jobs.find((job) => job.label === 'routine.json');
      expect(high?.priority).toBe('high');
      expect(normal?.priority).toBeUndefined();
      const items = jobs.filter((job) => job.label !== 'urgent.json' && job.label !== 'routine.json');
      // Items still waiting when the high job was started finished after it.
      const waitingThen = items.filter((job) => (job.finishedAt ?? 0) > (high?.createdAt ?? 0) + 2_000);
      expect(waitingThen.length).toBeGreaterThan(5);
      expect(waitingThen.every((job) => (job.finishedAt ?? 0) > (high?.finishedAt ?? 0))).toBe(true);
      // Each job's call at the sandbox, and the batch's calls that came between its start and it.
      const calls = sandbox.ledger.entries().filter((entry) => entry.operationId !== 'download');
      const callOf = (query: string) => calls.find((entry) => JSON.stringify(entry.body).includes(query));
      const highCall = callOf('urgent lamp');
      const normalCall = callOf('routine lamp');
      const batchCallsBetween = (from: number, call: LedgerEntry | undefined) =>
        calls.filter(
          (entry) =>
            entry.time > from && entry.time < (call?.time ?? 0) && entry !== highCall && entry !== normalCall,
        ).length;
      // The high job cuts in at the next token. The normal one is not held to a count here: its
      // place is the end of the line, but how long that line is depends on how far ahead the
      // batch's busy process has reserved, and on a loaded machine it can be empty when the normal
      // job takes its token (seen: 0 batch calls before it). The fairness bench measures a normal
      // job's wait behind a saturated batch (bench/README.md).
      const highWait = batchCallsBetween(high?.createdAt ?? 0, highCall);
      const normalWait = batchCallsBetween(normal?.createdAt ?? 0, normalCall);
      expect(highWait, `high: ${highWait} batch calls before it, normal: ${normalWait}`).toBeLessThanOrEqual(
        1,
      );
      expect(normalCall).toBeDefined();
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

// A job's priority through the real bin: while `opflow ingest` runs a batch that saturates the key,
// `opflow run --priority high --no-wait` starts a job that runs ahead of the batch's waiting items
// (it cuts in at the next token), where a normal job started before it takes its place in line.
// Fair shares are off here, so that the waits measure the priority, not the shares (the fairness
// bench measures those). The key's bucket is shared by every process on the
// database, so whichever process runs a job, it stands in the same line.
//
// The high job is judged by counting, not by the wall clock: every process's limiter logs the tokens
// it gives and the asks it refuses in the database file (rate_grants, in grant order), and
// `tokensWaited` counts the batch's tokens the key's line gave between the high call's first ask and
// its own token. The bound is one (the token already promised when it asked), however loaded the
// machine: it counts grants, not milliseconds. It cut in: it took over a token reserved for the
// batch, and the batch still had calls to make after its own. Breaking the priority (no cut-in, a
// normal horizon) fails this test. The normal job is counted too, and reported, not held to a count
// (see below); the fairness bench measures both behind a saturated batch (bench/fairness.md).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, openLocalDatabaseToRead, SqliteJobStore } from '../../../shared/backends/local';
import { readTokenGrants } from '../../../shared/backends/local/sqlite-rate-limiter';
import { tokensWaited } from '../../../shared/engine/admission/priority-lane';
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

  /** The key's grant log (one key here): every process's tokens and refused asks, in grant order. */
  const grantLog = () => {
    const db = openLocalDatabaseToRead(dbPath());
    try {
      const keys = [...readTokenGrants(db).values()];
      expect(keys).toHaveLength(1);
      return keys[0]!;
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
      const lines = Array.from({ length: 60 }, (_, i) =>
        JSON.stringify({ id: `q${i}`, query: `TTL:(lamp ${i})` }),
      );
      writeFileSync(join(dir, 'lamps.jsonl'), `${lines.join('\n')}\n`);
      writeFileSync(join(dir, 'urgent.json'), JSON.stringify({ query: 'TTL:(urgent lamp)' }));
      writeFileSync(join(dir, 'routine.json'), JSON.stringify({ query: 'TTL:(routine lamp)' }));
      // 60 one-call items at 2 calls/s: about 30 s of the key's budget, so the line is still long
      // when the jobs below are started (each `opflow run` may take seconds to start on a loaded machine).
      const batch = startOpflow(
        ['ingest', 'lamps.jsonl', '--workflow', 'patent-count', '--qps', '2', '--in-flight', '100'],
        { env, cwd: dir },
      );
      const deadline = Date.now() + 60_000;
      while ((await allJobs().catch(() => [])).filter((job) => job.status === 'SUCCEEDED').length < 2) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      {
        for (const [file, priority] of [
          ['routine.json', 'normal'],
          ['urgent.json', 'high'],
        ] as const) {
          const started = await runOpflow(
            ['run', 'patent-count', file, '--priority', priority, '--no-wait'],
            { env, cwd: dir },
          );
          expect(started.code, started.stderr).toBe(0);
        }
        const ended = await batch.done;
        expect(ended.code, ended.stderr).toBe(0);
      }
      // A priority it does not know is refused, naming the ones it knows.
      const wrong = await runOpflow(['run', 'patent-count', 'urgent.json', '--priority', 'urgent'], {
        env,
        cwd: dir,
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--priority must be one of high, normal, low, not "urgent"');
      // The batch's process ran both (they were due in its database); one left when it ended is resumed.
      if ((await allJobs()).some((job) => job.status !== 'SUCCEEDED')) {
        const resumed = await runOpflow(['resume', '--qps', '2'], { env, cwd: dir });
        expect(resumed.code, resumed.stderr).toBe(0);
      }
      const jobs = await allJobs();
      expect(jobs.every((job) => job.status === 'SUCCEEDED')).toBe(true);
      const high = jobs.find((job) => job.label === 'urgent.json') as Job;
      const normal = jobs.find((job) => job.label === 'routine.json');
      expect(high.priority).toBe('high');
      expect(normal?.priority).toBeUndefined();

      // Each job's call at the sandbox, and the batch's calls around the high job's.
      const calls = sandbox.ledger.entries().filter((entry) => entry.operationId !== 'download');
      const callOf = (query: string) => calls.find((entry) => JSON.stringify(entry.body).includes(query));
      const highCall = callOf('urgent lamp') as LedgerEntry;
      const normalCall = callOf('routine lamp');
      expect(highCall).toBeDefined();
      expect(normalCall).toBeDefined();
      const batchCalls = calls.filter((entry) => entry !== highCall && entry !== normalCall);

      // The batch's tokens between each job's first ask and its token, counted on the key's line.
      const grants = grantLog();
      const highWaited = tokensWaited(grants, high.id);
      const normalWaited = tokensWaited(grants, normal!.id);
      const cutIns = grants.filter((grant) => grant.kind === 'cut-in');
      const facts = `tokens waited: high ${highWaited.join(', ')}, normal ${normalWaited.join(', ')}; cut-ins by ${cutIns.map((grant) => (grant.by === high.id ? 'high' : grant.by)).join(', ')}`;
      // The line was full when it asked: the batch still had calls to make after the high job's.
      expect(
        batchCalls.filter((entry) => entry.time > highCall.time).length,
        `the batch's calls after the high job's (${facts})`,
      ).toBeGreaterThanOrEqual(5);
      // One call, one token: at most one of the batch's tokens between its ask and its own.
      expect(highWaited, facts).toHaveLength(1);
      expect(highWaited[0], facts).toBeLessThanOrEqual(1);
      // It cut in: a token reserved for the batch became its own.
      expect(
        cutIns.some((grant) => grant.by === high.id),
        facts,
      ).toBe(true);
      // The normal job is not held to a count: its place is the end of the line, but how long that
      // line is depends on how far ahead the batch's busy process has reserved, and on a loaded
      // machine it can be empty when the normal job takes its token (seen: 0 batch calls before
      // it). It never cuts in.
      expect(normalWaited, facts).toHaveLength(1);
      expect(
        cutIns.some((grant) => grant.by === normal!.id),
        facts,
      ).toBe(false);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

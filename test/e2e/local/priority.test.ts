// A job's priority through the real bin: while `opflow ingest` runs a batch that saturates the key,
// `opflow run --priority high --no-wait` starts a job that runs ahead of the batch's waiting items
// (it cuts in at the next token), where a normal job started with it takes its place in line.
// Fair shares are off here, so that the waits measure the priority, not the shares (the fairness
// bench measures those). The key's bucket is shared by every process on the database, so whichever
// process runs a job, it stands in the same line.
//
// Counted in tokens, not milliseconds: every process's limiter logs the tokens it gives in the
// database file (rate_grants: to which job, its call's first ask, the token's time, in grant order),
// and `tokensWaited` counts the other jobs' tokens the key's line gave between the high call's first
// ask and its own token. The bound is one (the token already promised when it asked), however
// loaded the machine: it counts grants, not milliseconds. The cut-in is asserted only when the
// grant log shows the batch held reserved tokens at the high job's ask (a token reserved before
// its grant, due after its ask): on a loaded machine the batch's busy process may have reserved
// none just then, and the high job then takes the line's next token without cutting in (still at
// most one token). Breaking the priority locally (no cut-in, a normal horizon) fails the count:
// the high job then waited 10 of the batch's tokens (28 November, a machine shared by seven agents).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, openLocalDatabaseToRead, SqliteJobStore } from '../../../shared/backends/local';
import { readTokenGrants } from '../../../shared/backends/local/sqlite-rate-limiter';
import { type TokenGrant, tokensWaited } from '../../../shared/engine/admission/priority-lane';
import type { Job } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, killRunningOpflows, runOpflow, startOpflow } from './opflow-process';

/** The batch: one-call items on a key of `qps` calls/s (`items / qps` seconds of the key's budget). */
const items = 48;
const qps = 4;

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
  /** The key's grant log (one key here): every process's tokens, in grant order; none yet: []. */
  const grantLog = (): TokenGrant[] => {
    const db = openLocalDatabaseToRead(dbPath());
    try {
      const keys = [...readTokenGrants(db).values()];
      expect(keys.length).toBeLessThanOrEqual(1);
      return keys[0] ?? [];
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
    "runs the high job's call at most one of the batch's tokens after its ask (the key's grant log), cut in; a normal one in line",
    async () => {
      const lines = Array.from({ length: items }, (_, i) =>
        JSON.stringify({ id: `q${i}`, query: `TTL:(lamp ${i})` }),
      );
      writeFileSync(join(dir, 'lamps.jsonl'), `${lines.join('\n')}\n`);
      writeFileSync(join(dir, 'urgent.json'), JSON.stringify({ query: 'TTL:(urgent lamp)' }));
      writeFileSync(join(dir, 'routine.json'), JSON.stringify({ query: 'TTL:(routine lamp)' }));
      // A priority it does not know is refused, naming the ones it knows (beside the batch: no key used).
      const wrong = runOpflow(['run', 'patent-count', 'urgent.json', '--priority', 'urgent'], {
        env,
        cwd: dir,
      });
      // 48 one-call items at 4 calls/s: 12 s of the key's budget at the least (25 s at load 18, the
      // machine then the bottleneck), so the line is still long when the jobs below, started at its
      // first token, ask (each `opflow run` took 9 s to start at load 18).
      const batch = startOpflow(
        ['ingest', 'lamps.jsonl', '--workflow', 'patent-count', '--qps', String(qps), '--in-flight', '100'],
        { env, cwd: dir },
      );
      // The batch's line has started: its first token is in the grant log (the file and its tables
      // are created by the batch's process).
      const granted = () => {
        try {
          return grantLog().length;
        } catch {
          return 0;
        }
      };
      const deadline = Date.now() + 60_000;
      while (granted() < 1) {
        expect(Date.now(), batch.stderrSoFar()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Both started together (one process start's wait, not two); the batch's process runs them.
      const started = await Promise.all(
        (
          [
            ['routine.json', 'normal'],
            ['urgent.json', 'high'],
          ] as const
        ).map(([file, priority]) =>
          runOpflow(['run', 'patent-count', file, '--priority', priority, '--no-wait'], { env, cwd: dir }),
        ),
      );
      for (const run of started) expect(run.code, run.stderr).toBe(0);
      const ended = await batch.done;
      expect(ended.code, ended.stderr).toBe(0);
      const refused = await wrong;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--priority must be one of high, normal, low, not "urgent"');
      // The batch's process ran both (they were due in its database); one left when it ended is resumed.
      if ((await allJobs()).some((job) => job.status !== 'SUCCEEDED')) {
        const resumed = await runOpflow(['resume', '--qps', String(qps)], { env, cwd: dir });
        expect(resumed.code, resumed.stderr).toBe(0);
      }
      const jobs = await allJobs();
      expect(jobs.filter((job) => job.status !== 'SUCCEEDED').map((job) => job.label)).toEqual([]);
      const high = jobs.find((job) => job.label === 'urgent.json') as Job;
      const normal = jobs.find((job) => job.label === 'routine.json') as Job;
      expect(high.priority).toBe('high');
      expect(normal.priority).toBeUndefined();
      // Each job paid one call: a holder whose token was taken over did not call on it too.
      const calls = sandbox.ledger.entries().filter((entry) => entry.operationId !== 'download');
      expect(calls).toHaveLength(items + 2);

      const grants = grantLog();
      const highWaited = tokensWaited(grants, high.id);
      const normalWaited = tokensWaited(grants, normal.id);
      const highToken = grants.find((grant) => grant.by === high.id) as TokenGrant;
      const others = (grant: TokenGrant) => grant.by !== high.id && grant.by !== normal.id;
      // The batch's tokens reserved before the high job's token and due after its ask: the lane it
      // could cut into.
      const heldAtAsk = grants.filter(
        (grant) =>
          others(grant) &&
          grant.kind === 'reserved' &&
          grant.seq < highToken.seq &&
          grant.tokenAt > highToken.askedAt,
      );
      const batchAfter = grants.filter((grant) => others(grant) && grant.seq > highToken.seq);
      const facts = `tokens waited: high ${highWaited.join(', ')} (${highToken.kind}), normal ${normalWaited.join(', ')}; the batch's reserved tokens at the high ask ${heldAtAsk.length}, its tokens given after the high one ${batchAfter.length}; ${grants.length} grants`;
      // The line was busy when it asked: the batch was still given tokens after the high job's.
      expect(batchAfter.length, facts).toBeGreaterThanOrEqual(5);
      // One call, one token: at most one of the batch's tokens between its ask and its own.
      expect(highWaited, facts).toHaveLength(1);
      expect(highWaited[0], facts).toBeLessThanOrEqual(1);
      // It cut in, when there was a reserved token to take over: the soonest one.
      if (heldAtAsk.length > 0) {
        expect(highToken.kind, facts).toBe('cut-in');
        expect(highToken.tokenAt, facts).toBe(Math.min(...heldAtAsk.map((grant) => grant.tokenAt)));
      }
      // The normal job never cuts in. It is not held to a count: its place is the end of the line,
      // whose length depends on how far ahead the batch's busy process has reserved (on a loaded
      // machine it can be empty just then); the fairness bench counts it behind a saturated batch.
      // Started together, the high call may take over the normal job's own reserved token: the
      // normal job then asks once more (a second grant), as any holder whose token was taken over.
      const tookNormals = grants.some(
        (grant) => grant.by === normal.id && grant.kind === 'reserved' && grant.tokenAt === highToken.tokenAt,
      );
      expect(normalWaited, facts).toHaveLength(tookNormals ? 2 : 1);
      expect(
        grants.some((grant) => grant.by === normal.id && grant.kind === 'cut-in'),
        facts,
      ).toBe(false);
      // Every token given once (a token taken over by a cut-in is its cutter's).
      const cut = new Set(grants.filter((grant) => grant.kind === 'cut-in').map((grant) => grant.tokenAt));
      const given = grants.filter((grant) => grant.kind === 'cut-in' || !cut.has(grant.tokenAt));
      expect(new Set(given.map((grant) => grant.tokenAt)).size, facts).toBe(given.length);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

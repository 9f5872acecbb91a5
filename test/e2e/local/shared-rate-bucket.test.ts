// Two opflow processes on one database share one key's rate budget, through the real bin: while
// `opflow ingest` runs a batch that saturates the key, an `opflow run` that waits (its workers claim
// the database's due steps, the batch's among them) and a `run --no-wait` start beside it. The
// sandbox limits the key to 2 calls in any second; each process is set to 1.2 a second, so two
// buckets of their own would send up to 2.4 a second and be throttled often. The margin covers a
// call that reaches the upstream up to 660 ms after its token on a busy machine (tokens i and i+2
// are 1,667 ms apart): at 1.5 a second (1,333 ms) a CI run with two other test legs beside it saw a
// call arrive 400 ms late and the call two tokens after it throttled.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteJobStore } from '../../../shared/backends/local';
import type { Job } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { PlatformCode, SANDBOX_API_KEY, type Sandbox, startSandbox } from '../../../shared/sandbox';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, killRunningOpflows, runOpflow, startOpflow } from './opflow-process';

const keyQps = 2;

describe('two opflow processes on one key', () => {
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
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-shared-bucket-'));
    sandbox = await startSandbox({ port: 0, keys: [{ key: SANDBOX_API_KEY, qps: keyQps }] });
    env = childEnv({
      OPFLOW_API_KEY: SANDBOX_API_KEY,
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
    'never exceeds the key’s calls per second at the upstream, with no call throttled',
    async () => {
      const lines = Array.from({ length: 30 }, (_, i) =>
        JSON.stringify({ id: `q${i}`, query: `TTL:(shared lamp ${i})` }),
      );
      writeFileSync(join(dir, 'lamps.jsonl'), `${lines.join('\n')}\n`);
      const singles = ['one', 'two', 'three', 'four', 'five'].map((name) => {
        writeFileSync(join(dir, `${name}.json`), JSON.stringify({ query: `TTL:(single ${name})` }));
        return `${name}.json`;
      });
      const batch = startOpflow(
        ['ingest', 'lamps.jsonl', '--workflow', 'patent-count', '--qps', '1.2', '--in-flight', '100'],
        { env, cwd: dir },
      );
      const deadline = Date.now() + 60_000;
      while ((await allJobs().catch(() => [])).filter((job) => job.status === 'SUCCEEDED').length < 4) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const [beside, started] = await Promise.all([
        runOpflow(['run', 'patent-count', ...singles.slice(0, 4), '--qps', '1.2'], { env, cwd: dir }),
        runOpflow(['run', 'patent-count', singles[4] as string, '--qps', '1.2', '--no-wait'], {
          env,
          cwd: dir,
        }),
      ]);
      expect(beside.code, beside.stderr).toBe(0);
      expect(started.code, started.stderr).toBe(0);
      const ended = await batch.done;
      expect(ended.code, ended.stderr).toBe(0);
      const jobs = await allJobs();
      expect(jobs).toHaveLength(35);
      expect(jobs.filter((job) => job.status !== 'SUCCEEDED').map((job) => job.label)).toEqual([]);

      const calls = sandbox.ledger.entries().filter((entry) => entry.operationId !== 'download');
      const throttled = calls.filter((entry) => entry.errorCode === PlatformCode.throttled);
      // On failure: when each call arrived, in ms from the first (T: throttled).
      const first = calls[0]?.time ?? 0;
      const timeline = calls
        .map((entry) => `${entry.time - first}${entry.errorCode === PlatformCode.throttled ? 'T' : ''}`)
        .join(' ');
      expect(throttled.length, timeline).toBe(0);
      // Every call that arrived, counted in the sliding second before it (as the sandbox counts).
      const times = calls.map((entry) => entry.time).sort((a, b) => a - b);
      const busiest = Math.max(...times.map((at) => times.filter((t) => t > at - 1_000 && t <= at).length));
      expect(busiest, timeline).toBeLessThanOrEqual(keyQps);
      // One call per job, and on a busy machine now and then a repeat (a call that timed out).
      expect(calls.length).toBeGreaterThanOrEqual(35);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

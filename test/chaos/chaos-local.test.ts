// The chaos suite on the local backend (docs/concepts/reliability.md): many jobs of mixed workflows against
// the sandbox answering 20% 5xx, 5% throttling, 2% connection resets (half before the work, half
// after it) and 1% malformed answers, run by two `opflow resume` worker processes (the real bin) on
// one database, one of them killed with SIGKILL at random moments and started again.
//
// `npm test` runs it bounded (OPFLOW_CHAOS_JOBS, default 24 jobs, 3 kills); `npm run test:chaos` runs
// 1,000 jobs. It asserts: every job terminal; every job that could succeed succeeded (a job may fail
// only where the engine refused to risk paying twice: an answer to a create that was lost or
// unreadable); every paid call the sandbox did is its step's first or a repeat its job counted (one
// repeated by a crash between call and commit), each put to its job and step (paid-calls.ts); no job
// completed twice; no report lost. It prints the figures of the run (see docs/concepts/reliability.md).
// OPFLOW_CHAOS_SEED picks the sandbox's fault draws and the kill times.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileReportStore, openLocalDatabase, SqliteJobStore } from '../../shared/backends/local';
import type { Job } from '../../shared/engine/job-record';
import { listAll } from '../../shared/runtime/job-queries';
import { scaledTaskDurations } from '../../shared/runtime/local/sandbox-launch';
import { startSandbox } from '../../shared/sandbox';
import { workflows } from '../../shared/workflows';
import { childEnv, killRunningOpflows, type OpflowProcess, startOpflow } from '../e2e/local/opflow-process';
import { chaosFaultRules, chaosInputs, failedOnPurpose, failedTransiently } from './chaos-plan';
import { auditPaidCalls, type Crash, explainAudit } from './paid-calls';

const jobCount = Number(process.env.OPFLOW_CHAOS_JOBS ?? 24);
const kills = Number(process.env.OPFLOW_CHAOS_KILLS ?? Math.max(3, Math.round(jobCount / 40)));
const seed = Number(process.env.OPFLOW_CHAOS_SEED ?? 8);
const speed = 300;
const concurrency = 8;

describe('chaos on the local backend', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-chaos-local-'));
  const dbPath = join(dir, 'state', 'opflow.db');
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  const readJobs = async (): Promise<Job[]> => {
    if (!existsSync(dbPath)) return [];
    const db = openLocalDatabase(dbPath);
    try {
      return await listAll(new SqliteJobStore(db), {});
    } finally {
      db.close();
    }
  };

  it(`${jobCount} jobs of mixed workflows, faults on 28% of calls, two workers, ${kills} kill -9s: nothing lost, nothing paid twice unseen`, {
    timeout: Math.max(600_000, jobCount * 6_000),
  }, async () => {
    const startedAt = Date.now();
    const sandbox = await startSandbox({
      seed,
      faults: chaosFaultRules(),
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 100, spreadMs: 50 },
      streamChunkDelayMs: 0,
      ledgerBodies: true,
    });
    const crashes: Crash[] = [];
    try {
      const env = childEnv({
        OPFLOW_BASE_URL: sandbox.url,
        OPFLOW_SANDBOX_SPEED: String(speed),
        OPFLOW_DB: dbPath,
        OPFLOW_OUT: join(dir, 'out'),
        OPFLOW_QPS: '200',
        OPFLOW_CONCURRENCY: String(concurrency),
      });
      // Create the jobs, one run --no-wait per workflow (a JSON array of inputs each).
      const perWorkflow = new Map<string, unknown[]>();
      for (const { workflow, input } of chaosInputs(jobCount, 'local')) {
        perWorkflow.set(workflow, [...(perWorkflow.get(workflow) ?? []), input]);
      }
      for (const [workflow, inputs] of perWorkflow) {
        const file = join(dir, `${workflow}.json`);
        writeFileSync(file, JSON.stringify(inputs));
        const created = await startOpflow(['--quiet', 'run', '--no-wait', workflow, file], { env, cwd: dir })
          .done;
        expect(created.code, created.stderr).toBe(0);
      }
      expect((await readJobs()).length).toBe(jobCount);

      // Two workers on the one database; one is killed at a random moment, `kills` times.
      const workers: (OpflowProcess | undefined)[] = [undefined, undefined];
      const start = (slot: number) => {
        workers[slot] = startOpflow(['--quiet', 'resume'], { env, cwd: dir });
      };
      start(0);
      start(1);
      let random = seed;
      const next = () => {
        random = (random * 1103515245 + 12345) % 2 ** 31;
        return random / 2 ** 31;
      };
      let killed = 0;
      while (killed < kills) {
        await new Promise((resolve) => setTimeout(resolve, 500 + next() * 2500));
        const slot = next() < 0.5 ? 0 : 1;
        const worker = workers[slot]!;
        if (worker.child.exitCode === null && worker.child.signalCode === null) {
          crashes.push({ at: Date.now(), what: `kill -9 of worker ${slot} (pid ${worker.child.pid})` });
          worker.child.kill('SIGKILL');
          await worker.done;
          killed += 1;
        }
        start(slot);
      }
      // Then let them finish; a worker that ends while jobs remain (the other's leases) starts again.
      for (;;) {
        const results = await Promise.all(workers.map((worker) => worker!.done));
        for (const result of results) expect(result.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
        const jobs = await readJobs();
        if (jobs.every((job) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status))) break;
        start(0);
        start(1);
      }

      // Jobs whose transient faults outlasted their attempts lose nothing: one `opflow retry` each.
      const transient = (await readJobs()).filter(failedTransiently);
      for (const job of transient) {
        const retried = await startOpflow(['--quiet', 'retry', job.id], { env, cwd: dir }).done;
        expect(retried.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
      }

      const jobs = await readJobs();
      const succeeded = jobs.filter((job) => job.status === 'SUCCEEDED');
      const failed = jobs.filter((job) => job.status === 'FAILED');
      // Every job terminal, and every failure one the engine chose rather than risk a second payment.
      expect(jobs.filter((job) => !['SUCCEEDED', 'FAILED'].includes(job.status))).toEqual([]);
      expect(
        failed
          .filter((job) => !failedOnPurpose(job))
          .map((job) => `${job.id} ${job.workflow}: ${job.lastError?.message}`),
      ).toEqual([]);

      // Every paid call the sandbox did is its step's first, or a repeat its job counted.
      const log = readFileSync(join(dir, 'state', 'opflow.log'), 'utf8');
      const audit = auditPaidCalls(sandbox.ledger.entries(), jobs, workflows, 'local');
      expect(explainAudit(audit, crashes, (jobId) => logLinesOf(log, jobId))).toBe('');
      // A kill -9 interrupts at most the calls in flight at that moment (one per worker slot).
      expect(audit.repeatsSeenUpstream).toBeLessThanOrEqual(killed * concurrency);
      // And only those are counted: a call the upstream answered it did not do (a 503, a refusal,
      // a connection never made) is sent again without being counted. What is counted but was not
      // repeated upstream is a call a kill cut before the sandbox did its work.
      expect(audit.repeatsCounted - audit.repeatsSeenUpstream).toBeLessThanOrEqual(killed * concurrency);

      // No double completion: one "job succeeded" line per job in the shared log.
      const completions = new Map<string, number>();
      for (const line of log.split('\n')) {
        if (!line.includes('"job succeeded"')) continue;
        const id = (JSON.parse(line) as { jobId?: string }).jobId ?? '?';
        completions.set(id, (completions.get(id) ?? 0) + 1);
      }
      expect([...completions].filter(([, count]) => count > 1)).toEqual([]);

      // No report lost: every file a succeeded job lists is on disk.
      const reports = new FileReportStore({ outDir: join(dir, 'out') });
      const missing: string[] = [];
      for (const job of succeeded) {
        expect(job.outputs.length, job.id).toBeGreaterThan(0);
        for (const key of job.outputs) if (!(await reports.get(key))) missing.push(key);
      }
      expect(missing).toEqual([]);

      const faults: Record<string, number> = {};
      for (const entry of sandbox.ledger.entries({ outcome: 'fault' })) {
        const kind = entry.fault ?? '?';
        faults[kind] = (faults[kind] ?? 0) + 1;
      }
      const figures = {
        backend: 'local',
        jobs: jobs.length,
        succeeded: succeeded.length,
        failedOnPurpose: failed.length,
        retriedAfterTransientFaults: transient.length,
        transientFailures: transient.map((job) => `${job.workflow}: ${job.lastError?.message.slice(0, 100)}`),
        failures: failed.map((job) => `${job.workflow}: ${job.lastError?.message.slice(0, 120)}`),
        kills: killed,
        upstreamCalls: sandbox.ledger.count(),
        faults,
        paidCalls: audit.paidCalls,
        paidRepeatsSeenUpstream: audit.repeatsSeenUpstream,
        paidRepeatsCounted: audit.repeatsCounted,
        duplicateCreatesSeenUpstream: sandbox.ledger.duplicateCreates(),
        wallSeconds: Math.round((Date.now() - startedAt) / 1000),
      };
      console.log(`chaos figures: ${JSON.stringify(figures)}`);
      if (process.env.OPFLOW_CHAOS_FIGURES)
        writeFileSync(process.env.OPFLOW_CHAOS_FIGURES, `${JSON.stringify(figures, null, 2)}\n`);
    } finally {
      killRunningOpflows();
      await sandbox.close();
    }
  });
});

/** A job's lines of the workers' shared log, short: time, message, step, status, error. */
function logLinesOf(log: string, jobId: string): string[] {
  const lines: string[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes(jobId)) continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      const error = entry['error'] as { kind?: string; message?: string } | undefined;
      lines.push(
        [
          entry['time'],
          entry['msg'] ?? entry['message'],
          entry['step'],
          entry['status'],
          error?.kind,
          error?.message?.slice(0, 100),
        ]
          .filter((part) => part !== undefined)
          .join(' '),
      );
    } catch {
      lines.push(line.slice(0, 200));
    }
  }
  return lines;
}

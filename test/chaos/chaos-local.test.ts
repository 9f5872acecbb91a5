// The chaos suite on the local backend (docs/RELIABILITY.md): many jobs of mixed workflows against
// the sandbox answering 20% 5xx, 5% throttling, 2% connection resets (half before the work, half
// after it) and 1% malformed answers, run by two `opflow resume` worker processes (the real bin) on
// one database, one of them killed with SIGKILL at random moments and started again.
//
// `npm test` runs it bounded (OPFLOW_CHAOS_JOBS, default 24 jobs, 3 kills); `npm run test:chaos` runs
// 1,000 jobs. It asserts: every job terminal; every job that could succeed succeeded (a job may fail
// only where the engine refused to risk paying twice: an answer to a create that was lost or
// unreadable); no create repeated except by a crash between call and commit, each counted; no job
// completed twice; no report lost. It prints the figures of the run (see RELIABILITY.md).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileReportStore, openLocalDatabase, SqliteJobStore } from '../../shared/backends/local';
import type { Job } from '../../shared/engine/job';
import { catalogue, type OperationId } from '../../shared/openplatform/catalogue';
import { listAll } from '../../shared/runtime/job-queries';
import { scaledTaskDurations } from '../../shared/runtime/sandbox-launch';
import { startSandbox } from '../../shared/sandbox';
import type { FaultRule } from '../../shared/sandbox/faultRules';
import { workflows } from '../../shared/workflows';
import { childEnv, killRunningOpflows, type OpflowProcess, startOpflow } from '../e2e/local/opflow-process';

const jobCount = Number(process.env.OPFLOW_CHAOS_JOBS ?? 24);
const kills = Number(process.env.OPFLOW_CHAOS_KILLS ?? Math.max(3, Math.round(jobCount / 40)));
const seed = Number(process.env.OPFLOW_CHAOS_SEED ?? 8);
const speed = 300;

/** The workflows mixed, and an input for each (every input unique, so repeated creates show). */
const mix: [workflow: string, input: (i: number) => unknown][] = [
  ['patent-count', (i) => ({ query: `TTL:(folding hinge ${i})` })],
  [
    'novelty-check',
    (i) => ({
      text: `Variant ${i}: a bicycle helmet of six rigid shell segments joined by textile hinges, folding flat.`,
    }),
  ],
  ['find-solution', (i) => ({ problem: `How can hinge wear be reduced in folding helmet variant ${i}?` })],
  ['encyclopedia-qa', (i) => ({ question: `What is compound ${i} used for in the treatment of migraine?` })],
  ['llm-chat', (i) => ({ query: `Summarise the state of the art of folding helmets, variant ${i}.` })],
  [
    'technical-disclosure',
    (i) => ({
      text: `Variant ${i}: a helmet whose segments lock open with a magnetic buckle and fold along textile hinges.`,
    }),
  ],
];

/** Operations the mixed workflows call that create something upstream (the non-poll calls). */
function createOperations(): string[] {
  const operations = new Set<string>();
  for (const [name] of mix) {
    for (const step of workflows.get(name)?.steps ?? []) {
      const operation = (step as { operation?: string }).operation;
      if (operation && catalogue[operation as OperationId]?.effect !== 'read') operations.add(operation);
    }
  }
  return [...operations];
}

/**
 * The faults: the first rule that fires decides the answer, so each probability is conditional on
 * the ones before not firing, giving 20% 5xx, 5% throttling, 2% resets and 1% malformed overall.
 * Malformed answers go to create (non-poll) calls only: a malformed answer to a poll fails the job
 * until the engine retries unreadable reads (issue 8 item 4, the i10 engineer's).
 */
function faultRules(): FaultRule[] {
  const rules: FaultRule[] = [
    { kind: 'http-5xx', probability: 0.2 },
    { kind: 'throttle-429', probability: 0.05 / 0.8, retryAfterSeconds: 0 },
    { kind: 'reset', when: 'before', probability: 0.01 / 0.75 },
    { kind: 'reset', when: 'after', probability: 0.01 / 0.7425 },
  ];
  for (const operation of createOperations()) {
    rules.push({ kind: 'malformed', operation, probability: 0.01 / 0.735 });
  }
  return rules;
}

/** Failures the engine chooses on purpose: a create whose answer was lost or unreadable is not sent again. */
function failedOnPurpose(job: Job): boolean {
  const error = job.lastError;
  return error !== undefined && !error.retryable && (error.kind === 'protocol' || error.kind === 'network');
}

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
      faults: faultRules(),
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 100, spreadMs: 50 },
      streamChunkDelayMs: 0,
    });
    try {
      const env = childEnv({
        OPFLOW_BASE_URL: sandbox.url,
        OPFLOW_SANDBOX_SPEED: String(speed),
        OPFLOW_DB: dbPath,
        OPFLOW_OUT: join(dir, 'out'),
        OPFLOW_QPS: '200',
        OPFLOW_CONCURRENCY: '8',
      });
      // Create the jobs, one run --no-wait per workflow (a JSON array of inputs each).
      const perWorkflow = new Map<string, unknown[]>();
      for (let i = 0; i < jobCount; i++) {
        const [workflow, input] = mix[i % mix.length]!;
        perWorkflow.set(workflow, [...(perWorkflow.get(workflow) ?? []), input(i)]);
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

      // No create repeated except by a crash between call and commit, and each such repeat counted.
      const ledgerDuplicates = sandbox.ledger.duplicateCreates();
      const counted = jobs.reduce((sum, job) => sum + job.usage.duplicateCreates, 0);
      expect(ledgerDuplicates).toBeLessThanOrEqual(counted);
      expect(ledgerDuplicates).toBeLessThanOrEqual(killed);

      // No double completion: one "job succeeded" line per job in the shared log.
      const log = readFileSync(join(dir, 'state', 'opflow.log'), 'utf8');
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
        failures: failed.map((job) => `${job.workflow}: ${job.lastError?.message.slice(0, 120)}`),
        kills: killed,
        upstreamCalls: sandbox.ledger.count(),
        faults,
        duplicateCreatesSeenUpstream: ledgerDuplicates,
        duplicateCreatesCounted: counted,
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

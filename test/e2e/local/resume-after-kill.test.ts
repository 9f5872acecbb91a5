// kill -9 loses nothing: the real bin is killed mid-run (twice), and running it again continues every
// unfinished job from its last committed step. The sandbox runs in this test process, so its ledger
// outlives the killed commands and shows which calls each run made.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { noveltyCheck } from '../../../shared/workflows';
import { jobsInDatabase } from '../../support/job-snapshots';
import {
  childEnv,
  killRunningOpflows,
  type OpflowProcess,
  repoRoot,
  runOpflow,
  startOpflow,
} from './opflow-process';

const speed = 40;

interface KillSnapshot {
  /** The last ledger entry answered before the next command started. */
  seq: number;
  jobs: Job[];
}

describe('resume after kill -9', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;
  const examples = join(repoRoot, 'examples', 'disclosures');

  const snapshotJobs = () => jobsInDatabase(join(dir, 'state', 'opflow.db'));
  /**
   * Kills `run` with SIGKILL as soon as some job is in the middle of a create call at or after
   * `fromStep`: its intent for the current step is committed, the call has not been answered yet.
   */
  const killMidCreate = async (run: OpflowProcess, fromStep: number): Promise<KillSnapshot> => {
    const midCreate = (job: Job) =>
      noveltyCheck.steps.findIndex((step) => step.name === job.step) >= fromStep &&
      (job.intents[job.step] ?? 0) > 0 &&
      job.status === 'RUNNING';
    let exited = false;
    void run.done.then(() => {
      exited = true;
    });
    for (;;) {
      if (exited) throw new Error(`opflow ended before a kill point:\n${run.stderrSoFar()}`);
      if ((await snapshotJobs()).some(midCreate)) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    run.child.kill('SIGKILL');
    const result = await run.done;
    expect(result.signal).toBe('SIGKILL');
    const entries = sandbox.ledger.entries();
    const jobs = await snapshotJobs();
    expect(jobs.some(midCreate)).toBe(true);
    return { seq: entries[entries.length - 1]?.seq ?? 0, jobs };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-kill-'));
    sandbox = await startSandbox({
      port: 0,
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 10_000 / speed, spreadMs: 5_000 / speed },
      // Every call takes a while, so a kill is likely to land while calls are in flight.
      faults: [{ kind: 'latency', minMs: 150, maxMs: 300 }],
    });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: join(dir, 'state', 'opflow.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('continues every job from its last committed step, repeating no finished step', async () => {
    // First run: killed in the middle of a create after the first step.
    const first = await killMidCreate(startOpflow(['run', 'novelty-check', examples], { env, cwd: dir }), 1);
    expect(first.jobs).toHaveLength(6);
    const unfinishedAtFirstKill = first.jobs.filter((job) => job.status !== 'SUCCEEDED').length;
    expect(unfinishedAtFirstKill).toBeGreaterThan(0);

    // The same command again joins the unfinished jobs instead of starting new ones; killed again.
    const second = startOpflow(['run', 'novelty-check', examples], { env, cwd: dir });
    await second.waitForLines(/continuing \d+ unfinished jobs? from an earlier run/, 1);
    expect(second.stderrSoFar()).toContain(`continuing ${unfinishedAtFirstKill} unfinished job`);
    const secondSnapshot = await killMidCreate(second, 4);
    expect(secondSnapshot.jobs).toHaveLength(6);

    // resume finishes everything.
    const resumed = await runOpflow(['resume', '--json'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    const final = await snapshotJobs();
    expect(final).toHaveLength(6);
    for (const job of final) {
      expect(job.status, `${job.label}: ${job.lastError?.message}`).toBe('SUCCEEDED');
      expect(readFileSync(join(dir, 'out', job.id, 'report.md'), 'utf8').length).toBeGreaterThan(200);
    }

    // No step a job had finished before a kill was called again for that job afterwards.
    const stepIndexOf = new Map<string, number>();
    noveltyCheck.steps.forEach((step, index) => {
      if (step.kind === 'call' || step.kind === 'stream') stepIndexOf.set(step.operation, index);
    });
    const taskBodyHash = (taskId: string) =>
      createHash('sha256')
        .update(JSON.stringify({ task_id: taskId }))
        .digest('hex');
    for (const snapshot of [first, secondSnapshot]) {
      const later = sandbox.ledger.entries().filter((entry) => entry.seq > snapshot.seq);
      for (const job of snapshot.jobs) {
        const taskId = job.context.taskId;
        if (typeof taskId !== 'string') continue;
        const committedStep = noveltyCheck.steps.findIndex((step) => step.name === job.step);
        const calls = later.filter((entry) => entry.bodyHash === taskBodyHash(taskId));
        for (const call of calls) {
          expect(
            stepIndexOf.get(call.operationId),
            `${job.label}: ${call.operationId} after a kill`,
          ).toBeGreaterThanOrEqual(committedStep);
        }
      }
    }

    // A create repeated at all was one in flight at a kill, and the jobs account for every one.
    const accounted = final.reduce((sum, job) => sum + job.usage.duplicateCreates, 0);
    const inFlightAtKills = [first, secondSnapshot]
      .flatMap((snapshot) => snapshot.jobs)
      .filter((job) => job.status === 'RUNNING' && (job.intents[job.step] ?? 0) > 0).length;
    expect(accounted).toBeGreaterThanOrEqual(1);
    expect(accounted).toBeLessThanOrEqual(inFlightAtKills);
    expect(sandbox.ledger.duplicateCreates()).toBeLessThanOrEqual(accounted);
  }, 180_000);
});

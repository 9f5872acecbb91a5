// kill -9 loses nothing with the built-in sandbox too: it runs inside the killed opflow, so its tasks
// must come back from sandbox-state.json beside the database. The real bin is killed mid-run (twice)
// after jobs have passed their first steps; running it again and resuming finish every job, and no
// call ever meets an upstream task the restarted sandbox does not know (404 not-found). Once no job
// needs the tasks, the next command starts afresh.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
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
const stepIndex = (job: Job) => noveltyCheck.steps.findIndex((step) => step.name === job.step);
const unfinished = (job: Job) => !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status);

describe('resume after kill -9 with the built-in sandbox', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const examples = join(repoRoot, 'examples', 'disclosures');
  const dbPath = () => join(dir, 'state', 'opflow.db');
  const stateFile = () => join(dir, 'state', 'sandbox-state.json');

  const snapshotJobs = () => jobsInDatabase(dbPath());
  /** Kills `run` with SIGKILL once `ready` holds for the jobs, and returns them as they were then. */
  const killWhen = async (run: OpflowProcess, ready: (jobs: Job[]) => boolean): Promise<Job[]> => {
    let exited = false;
    void run.done.then(() => {
      exited = true;
    });
    for (;;) {
      if (exited) throw new Error(`opflow ended before a kill point:\n${run.stderrSoFar()}`);
      if (ready(await snapshotJobs())) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    run.child.kill('SIGKILL');
    expect((await run.done).signal).toBe('SIGKILL');
    return snapshotJobs();
  };
  /** Upstream task ids the sandbox state file holds. */
  const savedTaskIds = () =>
    Object.keys(JSON.parse(readFileSync(stateFile(), 'utf8')).registries.novelty as Record<string, unknown>);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-kill-built-in-'));
    // No OPFLOW_API_KEY and no OPFLOW_BASE_URL: every command starts its own built-in sandbox.
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: dbPath(),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('continues every job against the same upstream tasks, and none meets a task the sandbox forgot', async () => {
    // First run: killed once two jobs have confirmed their summary (their task has a confirmation
    // upstream) while some are still working.
    const first = startOpflow(['run', 'novelty-check', examples], { env, cwd: dir });
    const atFirstKill = await killWhen(
      first,
      (jobs) =>
        jobs.length === 6 &&
        jobs.filter((job) => stepIndex(job) >= 3).length >= 2 &&
        jobs.some((job) => unfinished(job) && typeof job.context.taskId === 'string'),
    );
    expect(first.stderrSoFar()).toContain('using the built-in sandbox');
    const heldIds = atFirstKill
      .filter((job) => unfinished(job) && typeof job.context.taskId === 'string')
      .map((job) => job.context.taskId as string);
    expect(heldIds.length).toBeGreaterThan(0);
    // Everything a job committed was on disk before its answer: the killed sandbox's file has them.
    expect(savedTaskIds()).toEqual(expect.arrayContaining(heldIds));

    // The same command again joins the unfinished jobs; its new sandbox continues the tasks. Killed
    // again once a job held at the first kill has moved on to a later step.
    const second = startOpflow(['run', 'novelty-check', examples], { env, cwd: dir });
    await second.waitForLines(/continuing \d+ unfinished jobs? from an earlier run/, 1);
    const stepAtFirstKill = new Map(atFirstKill.map((job) => [job.id, stepIndex(job)]));
    const atSecondKill = await killWhen(
      second,
      (jobs) =>
        jobs.some(
          (job) =>
            heldIds.includes(job.context.taskId as string) &&
            stepIndex(job) > (stepAtFirstKill.get(job.id) ?? 0),
        ) && jobs.some(unfinished),
    );
    expect(second.stderrSoFar()).toMatch(
      /opflow: built-in sandbox: continuing \d+ tasks? from .*sandbox-state\.json/,
    );
    expect(atSecondKill.filter(unfinished).length).toBeGreaterThan(0);

    // resume finishes everything.
    const resumed = await runOpflow(['resume', '--json'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/opflow: built-in sandbox: continuing \d+ tasks? from /);
    const final = await snapshotJobs();
    expect(final).toHaveLength(6);
    for (const job of final) {
      expect(job.status, `${job.label}: ${job.lastError?.message}`).toBe('SUCCEEDED');
      expect(job.lastError?.kind, `${job.label}: ${job.lastError?.message}`).not.toBe('not-found');
      expect(readFileSync(join(dir, 'out', job.id, 'report.md'), 'utf8').length).toBeGreaterThan(200);
    }
    // The jobs held at the first kill kept their upstream task to the end.
    for (const job of final.filter((candidate) => heldIds.includes(candidate.context.taskId as string))) {
      expect(atFirstKill.find((earlier) => earlier.id === job.id)?.context.taskId).toBe(job.context.taskId);
    }

    // No step failed or was retried for a not-found answer, in any of the three processes.
    const log = readFileSync(join(dir, 'state', 'opflow.log'), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { message: string; error?: { kind?: string; message?: string } });
    const notFound = log.filter((entry) => entry.error?.kind === 'not-found');
    expect(notFound.map((entry) => `${entry.message}: ${entry.error?.message}`)).toEqual([]);

    // With no job left that needs them, the next command starts the sandbox on a fresh file.
    expect(savedTaskIds().length).toBeGreaterThanOrEqual(6);
    const idle = await runOpflow(['resume'], { env, cwd: dir });
    expect(idle.stdout).toContain('nothing to resume');
    expect(savedTaskIds()).toEqual([]);
  }, 180_000);
});

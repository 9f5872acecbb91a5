// Step workers that die between any two of their I/O operations: after the upstream call, after
// the S3 write, after the commit (before the enqueue), after the enqueue, before the delete. Every
// job still ends SUCCEEDED exactly once, with one report, and every repeated create or read is counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';
import { CrashPlan, crashPoints } from './harness/crash-plan';

const plan = new CrashPlan(3);
let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({
    workers: 2,
    maxReceiveCount: 5,
    workerFactory: async (w) => plan.worker(w.env),
    deleteAfter: plan.deleteAfter,
  });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

describe('opflow on AWS: a worker dies between two I/O operations', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it.each(crashPoints)('%s: every job still succeeds exactly once, with one report', async (point) => {
    plan.aim(point);
    world.sandbox.ledger.clear();
    const ids = [
      await world.submit({
        workflow: 'novelty-check',
        input: {
          text: `A self-cooling brake disc (${point}) with internal vanes shaped by topology optimisation.`,
        },
      }),
      await world.submit({
        workflow: 'find-solution',
        input: { problem: `How can a brake disc (${point}) shed heat faster without adding mass?` },
      }),
    ];
    const jobs = await world.settle(ids, { drain: true });

    expect(plan.crashes).toBeGreaterThanOrEqual(2);
    expect(jobs.map((job) => job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    for (const job of jobs) {
      const finishes = world
        .logLines()
        .filter((line) => line.message === 'job succeeded' && line.jobId === job.id);
      expect(finishes).toHaveLength(1);
      expect(new Set(job.outputs).size).toBe(job.outputs.length);
      const keys = await world.reports.list(`reports/${job.id}/`);
      for (const name of ['report.html', 'report.md', 'result.json'])
        expect(keys).toContain(`reports/${job.id}/${name}`);
      const attachments = keys.filter((key) => key.includes('/attachments/'));
      expect(attachments.sort()).toEqual(job.outputs.filter((key) => key.includes('/attachments/')).sort());
    }
    // The cost of a death is visible and bounded: every create the upstream really got twice is
    // counted in the jobs' usage (which counts every repeated send, so it may count more), and no
    // death costs more than one repeated send.
    const counted = jobs.reduce((sum, job) => sum + job.usage.duplicateCreates, 0);
    const real = world.sandbox.ledger.duplicateCreates();
    expect(counted).toBeGreaterThanOrEqual(real);
    expect(counted).toBeLessThanOrEqual(plan.crashes);
    if (point === 'after-upstream-call') expect(real).toBeGreaterThan(0);
    // A billed read (a poll, a count) repeated after a death between the read and its commit is
    // counted too: each death right after a billed call's answer is exactly one counted repeat, a
    // create's or a read's; a death after the commit (the enqueue, the delete) repeats no call.
    const reads = jobs.reduce((sum, job) => sum + (job.usage.duplicateReads ?? 0), 0);
    expect(counted + reads).toBeLessThanOrEqual(plan.crashes);
    if (point === 'after-upstream-call') {
      expect(counted + reads).toBe(plan.paidCallCrashes);
      expect(reads).toBeGreaterThan(0);
    }
    if (point === 'after-enqueue' || point === 'before-delete') expect(counted + reads).toBe(0);
    expect(world.dlqBodies()).toEqual([]);
  });
});

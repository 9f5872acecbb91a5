// The chaos suite on the aws backend against the emulators (DynamoDB Local, fauxqs SQS/S3, the
// Secrets Manager stand-in): the same mixed workflows and faults as chaos-local.test.ts, two
// step-worker instances, and workers dying between two of their I/O operations (after the upstream
// call, after the report write, after the commit, after the enqueue, before the delete), each
// fifth of the jobs under another of those crash points. Same assertions: every job terminal, every
// failure one the engine chose rather than pay twice, upstream duplicates counted and bounded by
// the crashes and each put to its job and step (paid-calls.ts), one completion per job, no report lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../shared/engine/job-record';
import { workflows } from '../../shared/workflows';
import { AwsWorld } from '../e2e/aws/harness/aws-world';
import { CrashPlan, crashPoints } from '../e2e/aws/harness/crash-plan';
import {
  chaosFaultRules,
  chaosInputs,
  failedOnPurpose,
  failedTransiently,
  imageWorkflowsAt,
} from './chaos-plan';
import { auditPaidCalls, explainAudit } from './paid-calls';

const jobCount = Number(process.env.OPFLOW_CHAOS_AWS_JOBS ?? process.env.OPFLOW_CHAOS_JOBS ?? 8);
const seed = Number(process.env.OPFLOW_CHAOS_SEED ?? 8);

const plan = new CrashPlan(3);
let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({
    workers: 2,
    maxReceiveCount: 10,
    sandbox: { seed, faults: chaosFaultRules(), streamChunkDelayMs: 0, ledgerBodies: true },
    workerFactory: async (w) => plan.worker(w.env),
    deleteAfter: plan.deleteAfter,
  });
}, 300_000);
afterAll(async () => {
  await world?.stop();
});

describe('chaos on the aws backend (emulators)', () => {
  it(`${jobCount} jobs of mixed workflows, faults on 28% of calls, workers dying at every crash point`, {
    timeout: Math.max(600_000, jobCount * 30_000),
  }, async () => {
    const startedAt = performance.now();
    // From the image-based workflows (their p010 uploads), then around the mix from its start.
    const inputs = chaosInputs(jobCount, 'aws', imageWorkflowsAt);
    const jobs: Job[] = [];
    let crashes = 0;
    const crashesByPoint: string[] = [];
    const perPoint = Math.ceil(inputs.length / crashPoints.length);
    for (const [index, point] of crashPoints.entries()) {
      const group = inputs.slice(index * perPoint, (index + 1) * perPoint);
      if (group.length === 0) continue;
      plan.aim(point);
      const ids: string[] = [];
      for (const { workflow, input } of group) ids.push(await world.submit({ workflow, input }));
      jobs.push(...(await world.settle(ids, { drain: true, maxRounds: 20_000 })));
      crashes += plan.crashes;
      crashesByPoint.push(`${plan.crashes} ${point}`);
    }

    // Jobs whose transient faults outlasted their attempts lose nothing: one retry each (the job API's).
    plan.aim(undefined);
    const transient = jobs.filter(failedTransiently);
    for (const job of transient) {
      const answer = await world.api('POST', `/jobs/${job.id}/retry`, {});
      expect(answer.status).toBe(200);
    }
    if (transient.length > 0) {
      const again = await world.settle(
        transient.map((job) => job.id),
        { drain: true, maxRounds: 20_000 },
      );
      for (const job of again) jobs[jobs.findIndex((old) => old.id === job.id)] = job;
    }

    expect(jobs.filter((job) => !['SUCCEEDED', 'FAILED'].includes(job.status))).toEqual([]);
    const failed = jobs.filter((job) => job.status === 'FAILED');
    expect(
      failed
        .filter((job) => !failedOnPurpose(job))
        .map((job) => `${job.id} ${job.workflow}: ${job.lastError?.message}`),
    ).toEqual([]);

    // Every paid call the sandbox did is its step's first, or a repeat its job counted.
    const audit = auditPaidCalls(world.sandbox.ledger.entries(), jobs, workflows, 'aws');
    const jobLines = (jobId: string) =>
      world
        .logLines()
        .filter((line) => line.jobId === jobId)
        .map((line) =>
          `${line.message} ${line.step ?? ''} ${JSON.stringify(line.error ?? '')}`.slice(0, 200),
        );
    expect(explainAudit(audit, `${crashesByPoint.join(', ')} (untimed)`, jobLines)).toBe('');
    expect(audit.repeatsSeenUpstream).toBeLessThanOrEqual(crashes);
    // Only repeats a crash may have caused are counted: a call the upstream answered it did not do
    // is sent again uncounted.
    expect(audit.repeatsCounted - audit.repeatsSeenUpstream).toBeLessThanOrEqual(crashes);

    const succeeded = jobs.filter((job) => job.status === 'SUCCEEDED');
    const missing: string[] = [];
    for (const job of succeeded) {
      const finishes = world
        .logLines()
        .filter((line) => line.message === 'job succeeded' && line.jobId === job.id);
      expect(finishes, job.id).toHaveLength(1);
      const keys = new Set(await world.reports.list(`reports/${job.id}/`));
      for (const key of job.outputs) if (!keys.has(key)) missing.push(key);
    }
    expect(missing).toEqual([]);

    const faults: Record<string, number> = {};
    for (const entry of world.sandbox.ledger.entries({ outcome: 'fault' })) {
      faults[entry.fault ?? '?'] = (faults[entry.fault ?? '?'] ?? 0) + 1;
    }
    console.log(
      `chaos figures: ${JSON.stringify({
        backend: 'aws (emulators)',
        jobs: jobs.length,
        succeeded: succeeded.length,
        failedOnPurpose: failed.length,
        retriedAfterTransientFaults: transient.length,
        failures: failed.map((job) => `${job.workflow}: ${job.lastError?.message.slice(0, 120)}`),
        workerCrashes: crashes,
        upstreamCalls: world.sandbox.ledger.count(),
        faults,
        paidCalls: audit.paidCalls,
        paidRepeatsSeenUpstream: audit.repeatsSeenUpstream,
        paidRepeatsCounted: audit.repeatsCounted,
        duplicateCreatesSeenUpstream: world.sandbox.ledger.duplicateCreates(),
        wallSeconds: Math.round((performance.now() - startedAt) / 1000),
      })}`,
    );
  });
});

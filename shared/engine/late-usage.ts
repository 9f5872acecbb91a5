/**
 * The usage of a call whose outcome lost to another writer (a cancel, a take-over, its deadline),
 * added to its job, and to its batch's settled totals when the job had finished. The runner loads
 * this on first use (a lost commit is rare; the step worker's start chunk is kept small).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { advance, type LateAnswer } from './advance';
import { type Batch, batchWithLateUsage } from './batch-store';
import type { EngineDeps } from './deps';
import { isTerminal, type Job, type JobUsage } from './job-record';
import { sendForVersion } from './send-for-version';
import type { Workflow } from './workflow';

/**
 * Waits before looking again at a job whose other paid call is in flight (its commit comes first):
 * about 8 s in all, the length of most calls; a longer one leaves this usage out (logged).
 */
const otherCallWaitsMs = [250, 500, 1_000, 2_000, 4_000] as const;

/**
 * Add a call's usage to the job whose outcome could not be committed, so no paid call goes
 * uncounted. `mark` is the call's own in-flight mark (`inFlightSince` of its claim).
 *
 * Like every write outside the runner, it leaves no job stranded: a job that runs on (retried,
 * taken over) is sent its message for the version written, since the one it had names the version
 * replaced; and it never lands while another paid call of the job is in flight (a take-over's, a
 * retried run's): that call's heartbeat and commit would lose, and its paid answer be thrown away.
 * It waits for that call's commit instead.
 */
export async function recordLateUsage(
  deps: EngineDeps,
  workflow: Workflow,
  jobId: string,
  usage: Partial<JobUsage>,
  answer: LateAnswer | undefined,
  mark?: number | undefined,
): Promise<void> {
  let waits = 0;
  for (let attempt = 0; attempt < 5; ) {
    const job = await deps.store.get(jobId);
    if (!job) return;
    if (anotherCallInFlight(job, mark)) {
      const waitMs = otherCallWaitsMs[waits++];
      if (waitMs === undefined) break;
      await sleep(waitMs);
      continue;
    }
    attempt++;
    const advanced = advance(
      workflow,
      job,
      { type: 'late-usage', usage, answer },
      deps.clock.now(),
      deps.random,
    );
    const next = callOver(advanced.job, mark);
    if (await commitLateUsage(deps, job, next)) {
      deps.onJobChange?.(next);
      await sendForVersion(deps, next);
      return;
    }
  }
  deps.log?.warn('could not add the usage of a call whose outcome lost to another writer', {
    jobId,
    usage,
    ...(waits > otherCallWaitsMs.length ? { why: 'another paid call of the job is still in flight' } : {}),
  });
}

/** A paid call of the job in flight that is not this one (a take-over's, a retried run's). */
function anotherCallInFlight(job: Job, mark: number | undefined): boolean {
  return !isTerminal(job.status) && job.inFlightSince !== undefined && job.inFlightSince !== mark;
}

/** A finished job still marked with this call (cancelled under it): the call is over, the mark goes. */
function callOver(job: Job, mark: number | undefined): Job {
  if (!isTerminal(job.status) || mark === undefined || job.inFlightSince !== mark) return job;
  return { ...job, inFlightSince: undefined, inFlightBy: undefined };
}

/**
 * The job with a late call's usage; a finished job of a batch with its batch, in the same write
 * (`batchWithLateUsage`), so the batch's settled totals (`opflow batch`, GET /batches/{id}, its
 * --max-units) hold what the job paid after it ended. A store that cannot write both at once
 * (none of the backends') writes the job, then the batch on its version.
 */
async function commitLateUsage(deps: EngineDeps, job: Job, next: Job): Promise<boolean> {
  const batches = deps.batches;
  const batch =
    batches && job.batchId !== undefined && isTerminal(job.status)
      ? await batches.get(job.batchId)
      : undefined;
  if (!batches || !batch) return deps.store.commit(next, job.version);
  const now = deps.clock.now();
  const withUsage = batchWithLateUsage(batch, job.id, job.usage, next.usage, now);
  if (deps.store.commitWithBatch)
    return deps.store.commitWithBatch(next, job.version, withUsage, batch.version);
  if (!(await deps.store.commit(next, job.version))) return false;
  for (let tries = 0, current: Batch | undefined = batch; current && tries < 20; tries++) {
    if (
      await batches.commit(batchWithLateUsage(current, job.id, job.usage, next.usage, now), current.version)
    )
      return true;
    current = await batches.get(current.id);
  }
  deps.log?.warn("a late call's usage was added to its job but not to its batch's totals", {
    jobId: job.id,
    batchId: batch.id,
  });
  return true;
}

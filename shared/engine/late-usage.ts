/**
 * The usage of a call whose outcome lost to another writer (a cancel, a take-over, its deadline),
 * added to its job, and to its batch's settled totals when the job had finished. The runner loads
 * this on first use (a lost commit is rare; the step worker's start chunk is kept small).
 */
import { advance, type LateAnswer } from './advance';
import { type Batch, batchWithLateUsage } from './batch-store';
import type { EngineDeps } from './deps';
import { isTerminal, type Job, type JobUsage } from './job-record';
import type { Workflow } from './workflow';

/** Add a call's usage to the job whose outcome could not be committed, so no paid call goes uncounted. */
export async function recordLateUsage(
  deps: EngineDeps,
  workflow: Workflow,
  jobId: string,
  usage: Partial<JobUsage>,
  answer: LateAnswer | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const job = await deps.store.get(jobId);
    if (!job) return;
    const next = advance(workflow, job, { type: 'late-usage', usage, answer }, deps.clock.now(), deps.random);
    if (await commitLateUsage(deps, job, next.job)) {
      deps.onJobChange?.(next.job);
      return;
    }
  }
  deps.log?.warn('could not add the usage of a call whose outcome lost to another writer', { jobId, usage });
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

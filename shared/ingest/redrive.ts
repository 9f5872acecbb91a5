/**
 * Redrive: run a batch's failed and cancelled items again through the engine's `retryJob`, each from
 * the step it stopped at (or from the step that creates the upstream task where that task failed or
 * is gone, a counted paid repeat), or from its first step with `fromStart`, with a new deadline
 * (`deadlineMs`: what helps items that failed on their deadline); succeeded items are not touched. The retried jobs
 * join the batch's in-flight set, so admission follows them to the end and counts them again.
 */
import type { Batch, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { JobRequestError } from '../engine/job-commands';
import { type RetryOptions, retryJob } from '../engine/retry';
import { listAll } from '../runtime/job-queries';

export interface RedriveOutcome {
  batch: Batch;
  retried: string[];
  refused: { jobId: string; reason: string }[];
}

export async function redriveBatch(
  deps: { engine: JobDeps; batches: BatchStore },
  batchId: string,
  /** From the start instead of the step each stopped at; a new deadline for each (default: as long as it had). */
  options: Pick<RetryOptions, 'fromStart' | 'deadlineMs' | 'maxUnits'> = {},
): Promise<RedriveOutcome> {
  const failed = [
    ...(await listAll(deps.engine.store, { batchId, status: 'FAILED' })),
    ...(await listAll(deps.engine.store, { batchId, status: 'CANCELLED' })),
  ];
  const retried: string[] = [];
  const refused: RedriveOutcome['refused'] = [];
  // retryJob takes each job off the batch's counts of finished jobs and into its in-flight set.
  const engine = { ...deps.engine, batches: deps.batches };
  for (const job of failed) {
    try {
      await retryJob(engine, job.id, {
        fromStart: options.fromStart,
        deadlineMs: options.deadlineMs,
        maxUnits: options.maxUnits,
      });
      retried.push(job.id);
    } catch (error) {
      if (!(error instanceof JobRequestError)) throw error;
      refused.push({ jobId: job.id, reason: error.message });
    }
  }
  if (retried.length === 0) {
    const batch = await deps.batches.get(batchId);
    if (!batch) throw new JobRequestError(`no batch ${batchId}`, 'not-found');
    return { batch, retried, refused };
  }
  return { batch: await reopenBatch(deps, batchId), retried, refused };
}

/**
 * A batch some of whose items run again: a stopped, paused or finished one runs again (admission
 * follows its items to the end and writes its summary anew).
 */
export async function reopenBatch(
  deps: { engine: Pick<JobDeps, 'clock'>; batches: BatchStore },
  batchId: string,
): Promise<Batch> {
  for (let tries = 0; tries < 20; tries++) {
    const batch = await deps.batches.get(batchId);
    if (!batch) throw new JobRequestError(`no batch ${batchId}`, 'not-found');
    const next: Batch = {
      ...batch,
      version: batch.version + 1,
      status: batch.status !== 'INGESTING' ? 'RUNNING' : batch.status,
      reason: undefined,
      finishedAt: undefined,
      updatedAt: deps.engine.clock.now(),
    };
    if (await deps.batches.commit(next, batch.version)) return next;
  }
  throw new JobRequestError(`batch ${batchId} keeps changing; try again`, 'conflict');
}

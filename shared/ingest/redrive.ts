/**
 * Redrive: run a batch's failed and cancelled items again through the engine's `retryJob`, each from
 * the step it stopped at (or from the step that creates the upstream task where that task failed or
 * is gone); succeeded items are not touched. The retried jobs
 * join the batch's in-flight set, so admission follows them to the end and counts them again.
 */
import type { Batch, BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import { JobRequestError } from '../engine/job-commands';
import { retryJob } from '../engine/retry';
import { listAll } from '../runtime/job-queries';

export interface RedriveOutcome {
  batch: Batch;
  retried: string[];
  refused: { jobId: string; reason: string }[];
}

export async function redriveBatch(
  deps: { engine: EngineDeps; batches: BatchStore },
  batchId: string,
): Promise<RedriveOutcome> {
  const failed = [
    ...(await listAll(deps.engine.store, { batchId, status: 'FAILED' })),
    ...(await listAll(deps.engine.store, { batchId, status: 'CANCELLED' })),
  ];
  const retried: string[] = [];
  const refused: RedriveOutcome['refused'] = [];
  const outcomes = { failed: 0, cancelled: 0, calls: 0, billedUnits: 0 };
  for (const job of failed) {
    try {
      await retryJob(deps.engine, job.id);
      retried.push(job.id);
      if (job.status === 'FAILED') outcomes.failed += 1;
      else outcomes.cancelled += 1;
      // The job's usage keeps growing from here; admission adds it again when it finishes.
      outcomes.calls += job.usage.calls;
      outcomes.billedUnits += job.usage.billedUnits;
    } catch (error) {
      if (!(error instanceof JobRequestError)) throw error;
      refused.push({ jobId: job.id, reason: error.message });
    }
  }
  for (let tries = 0; tries < 20; tries++) {
    const batch = await deps.batches.get(batchId);
    if (!batch) throw new JobRequestError(`no batch ${batchId}`, 404);
    const inFlight = [...new Set([...batch.inFlight, ...retried])];
    const next: Batch = {
      ...batch,
      version: batch.version + 1,
      inFlight,
      // Only jobs admission had counted as finished are taken off its counts.
      settled: {
        ...batch.settled,
        failed: Math.max(0, batch.settled.failed - outcomes.failed),
        cancelled: Math.max(0, batch.settled.cancelled - outcomes.cancelled),
        calls: Math.max(0, batch.settled.calls - outcomes.calls),
        billedUnits: Math.max(0, batch.settled.billedUnits - outcomes.billedUnits),
      },
      status: retried.length > 0 && batch.status !== 'INGESTING' ? 'RUNNING' : batch.status,
      reason: retried.length > 0 ? undefined : batch.reason,
      finishedAt: retried.length > 0 ? undefined : batch.finishedAt,
      updatedAt: deps.engine.clock.now(),
    };
    if (await deps.batches.commit(next, batch.version)) return { batch: next, retried, refused };
  }
  throw new JobRequestError(`batch ${batchId} keeps changing; try again`, 409);
}

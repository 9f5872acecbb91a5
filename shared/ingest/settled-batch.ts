/**
 * A settled batch (FINISHED, or STOPPED or PAUSED with nothing left running) one of whose jobs ended
 * again: a retry or a redrive of an item, a cancel of an item run again. Admission counts the job
 * (the batch finishes again then) and the batch's outputs (summary.csv, summary.xlsx, results.jsonl,
 * failed.jsonl, index.html) are rewritten whole from its items and their jobs as they are, so they
 * follow the jobs as the batch's totals do. Rewriting is idempotent: two processes that both rewrite
 * write the same files, and a change made meanwhile is in the later one, never lost by patching.
 *
 * Called locally by the commands that see a job of a batch end (run, resume, retry, cancel) and by
 * `opflow serve`'s batch rounds; on aws the step worker's end of a batch's job has the ingest
 * function drive the batch once (./../runtime/lambda/ingest-wake.ts), which does the same.
 */
import type { Batch } from '../engine/batch-store';
import { admitBatch } from './admission';
import { type OutputDeps, writeBatchOutputs } from './outputs';
import { outputsFinal } from './outputs-record';

/** Whether nothing of the batch runs or waits any more: its outputs are its final ones. */
export function settledForOutputs(batch: Batch): boolean {
  if (batch.inFlight.length > 0) return false;
  if (batch.status === 'FINISHED') return true;
  return (batch.status === 'STOPPED' || batch.status === 'PAUSED') && batch.cursor.done;
}

/**
 * Counts the ended jobs of a settled batch and rewrites its outputs when that changed it or when
 * they are not its final ones yet. A batch still running is left to whatever drives it (its
 * outputs are rewritten as it runs); a settled batch whose job still runs is left until it ends.
 * Whether the outputs were rewritten.
 */
export async function refreshSettledBatch(deps: OutputDeps, batchId: string): Promise<boolean> {
  const before = await deps.batches.get(batchId);
  if (!before) return false;
  const rejoined = before.status === 'FINISHED' && before.inFlight.length > 0;
  if (!rejoined && !settledForOutputs(before)) return false;
  const result = await admitBatch(deps, batchId);
  const batch = result?.batch ?? before;
  if (!settledForOutputs(batch)) return false;
  if ((result?.settled ?? 0) === 0 && outputsFinal(batch)) return false;
  await writeBatchOutputs(deps, batch);
  return true;
}

/** `refreshSettledBatch` for the batches of the jobs given that ended (each batch once). */
export async function refreshBatchesOf(
  deps: OutputDeps,
  jobs: readonly { batchId?: string | undefined; status: string }[],
): Promise<void> {
  const ended = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
  const ids = new Set(
    jobs.flatMap((job) => (job.batchId !== undefined && ended.has(job.status) ? [job.batchId] : [])),
  );
  for (const id of ids) await refreshSettledBatch(deps, id);
}

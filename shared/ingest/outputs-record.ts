/**
 * Where a batch's outputs are, and what a batch records when its outputs are written (outputs.ts; the aws ingest function as it
 * releases its lease): when, how long it took, and the finish they were written from, so a view can
 * tell a finished batch's final outputs from those written while it ran (`outputsFinal`).
 */
import type { Batch, BatchStore } from '../engine/batch-store';

/** The outputs' keys in the report store. */
export const batchOutputKeys = (batchId: string) => ({
  summary: `batches/${batchId}/summary.csv`,
  results: `batches/${batchId}/results.jsonl`,
  failed: `batches/${batchId}/failed.jsonl`,
  index: `batches/${batchId}/index.html`,
  workbook: `batches/${batchId}/summary.xlsx`,
});

/**
 * Whether the batch's outputs are its final ones: it is finished and they were written from it
 * finished (admission finishes a batch a moment before its outputs are rewritten).
 */
export function outputsFinal(batch: Batch): boolean {
  return (
    batch.status === 'FINISHED' &&
    batch.finishedAt !== undefined &&
    batch.outputsOfFinish === batch.finishedAt
  );
}

/** The fields that say the outputs of `written` (the batch as they were written from) are there. */
export function outputsRecord(
  current: Batch,
  written: Pick<Batch, 'status' | 'finishedAt'>,
  outputs: { at?: number | undefined; costMs?: number | undefined },
): Pick<Batch, 'outputsAt' | 'outputsCostMs' | 'outputsOfFinish'> {
  return {
    outputsAt: outputs.at,
    outputsCostMs: outputs.costMs,
    outputsOfFinish: written.status === 'FINISHED' ? written.finishedAt : current.outputsOfFinish,
  };
}

/**
 * Records on the batch that its outputs were written from `written` (a conditional commit, tried
 * again when another process committed first; the aws ingest function records them as it releases
 * its lease instead).
 */
export async function recordOutputsWritten(
  batches: BatchStore,
  written: Batch,
  outputs: { at: number; costMs: number },
): Promise<void> {
  for (let tries = 0; tries < 20; tries++) {
    const current = await batches.get(written.id);
    if (!current) return;
    const next = { ...current, version: current.version + 1, ...outputsRecord(current, written, outputs) };
    if (await batches.commit(next, current.version)) return;
  }
}

/**
 * How a batch looks to people and scripts: totals by status, calls, billed units, elapsed time and
 * an ETA from the observed pace (items finished per second since the run started).
 */
import type { Batch } from '../engine/batch-store';
import { failuresOf } from './batch';
import { batchOutputKeys } from './outputs';

export interface BatchView {
  id: string;
  name: string;
  status: Batch['status'];
  reason?: string | undefined;
  workflow: string;
  source: string;
  tenant: string;
  run: number;
  /** Items ever created in the batch, and by where they stand. */
  items: number;
  totals: { waiting: number; running: number; succeeded: number; failed: number; cancelled: number };
  /** This run: records read, new items, lines that were items already, bad lines. */
  thisRun: { records: number; created: number; existing: number; invalid: number; readingDone: boolean };
  failures: number;
  calls: number;
  billedUnits: number;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string | undefined;
  elapsedMs: number;
  /** Milliseconds to go at the pace so far; absent until something finished. */
  etaMs?: number | undefined;
  outputs: ReturnType<typeof batchOutputKeys>;
}

export function viewOf(batch: Batch, now: number): BatchView {
  const done = batch.settled.succeeded + batch.settled.failed + batch.settled.cancelled;
  const elapsedMs = (batch.finishedAt ?? now) - batch.runStartedAt;
  const remaining = Math.max(0, batch.items - done);
  const doneThisRun = done - (batch.settledAtRunStart ?? 0);
  const pace = elapsedMs > 0 && doneThisRun >= 3 ? doneThisRun / elapsedMs : 0;
  const active = batch.status === 'INGESTING' || batch.status === 'RUNNING';
  return {
    id: batch.id,
    name: batch.name,
    status: batch.status,
    reason: batch.reason,
    workflow: batch.workflow,
    source: batch.source.uri,
    tenant: batch.tenant,
    run: batch.run,
    items: batch.items,
    totals: {
      waiting: Math.max(0, batch.items - batch.admitted),
      running: batch.inFlight.length,
      succeeded: batch.settled.succeeded,
      failed: batch.settled.failed,
      cancelled: batch.settled.cancelled,
    },
    thisRun: { ...batch.counts, readingDone: batch.cursor.done },
    failures: failuresOf(batch),
    calls: batch.settled.calls,
    billedUnits: batch.settled.billedUnits,
    createdAt: new Date(batch.createdAt).toISOString(),
    updatedAt: new Date(batch.updatedAt).toISOString(),
    finishedAt: batch.finishedAt === undefined ? undefined : new Date(batch.finishedAt).toISOString(),
    elapsedMs,
    etaMs: active && pace > 0 && remaining > 0 ? Math.round(remaining / pace) : undefined,
    outputs: batchOutputKeys(batch.id),
  };
}

/**
 * How a batch looks to people and scripts: totals by status, calls, billed units, elapsed time and
 * an ETA from the observed pace (items finished per second since the run started).
 */
import type { Batch } from '../engine/batch-store';
import { isTerminal, type Job } from '../engine/job-record';
import type { JobStore } from '../engine/ports';
import type { UpstreamIdentity } from '../engine/upstream-identity';
import { jobsByIds, withUpstream } from './admission';
import { failuresOf } from './batch';
import { batchOutputKeys, outputsFinal } from './outputs-record';

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
  /** When its outputs (summary.csv, summary.xlsx, the index) were last written; absent before the first time. */
  outputsAt?: string | undefined;
  /** The outputs are the finished batch's final ones: link them as its results. */
  outputsFinal: boolean;
  /**
   * Finished, but its final outputs are not written yet (admission finishes a batch a moment before
   * they are rewritten): say "finished, writing outputs" and do not offer them as its results yet.
   */
  writingOutputs: boolean;
  /**
   * The upstreams its jobs ran on so far (finished ones, and running ones that made a call): the
   * sandbox means simulated data, not real publications. Empty before any call (or for a batch of
   * an earlier release, which did not record them).
   */
  upstreams: UpstreamIdentity[];
  /** Some of its jobs ran on the built-in sandbox: their data is simulated. */
  sandbox: boolean;
}

/**
 * The view with the batch's released, not yet counted jobs read as they are now: a job that ended
 * since admission last looked counts by its end, a running one's usage so far is in the calls and
 * billed units. What `opflow batch`, the job API, the dashboard and MCP show.
 */
export async function currentViewOf(store: JobStore, batch: Batch, now: number): Promise<BatchView> {
  const jobs = batch.inFlight.length > 0 ? await jobsByIds(store, batch.inFlight) : new Map();
  return viewOf(batch, now, [...jobs.values()]);
}

/** The view from the batch record alone, or with its in-flight jobs as read (see `currentViewOf`). */
export function viewOf(batch: Batch, now: number, inFlightJobs: readonly Job[] = []): BatchView {
  const counts = { ...batch.settled };
  const inFlight = new Set(batch.inFlight);
  let ended = 0;
  /** When the last of the in-flight jobs that ended did (a job of a finished batch run again ends after it). */
  let lastEnd: number | undefined;
  let upstreams = batch.upstreams ?? [];
  for (const job of inFlightJobs) {
    if (!inFlight.has(job.id)) continue;
    if (job.upstream) upstreams = withUpstream(upstreams, job.upstream);
    counts.calls += job.usage.calls;
    counts.billedUnits += job.usage.billedUnits;
    if (!isTerminal(job.status)) continue;
    ended += 1;
    const end = job.finishedAt ?? job.updatedAt;
    lastEnd = lastEnd === undefined ? end : Math.max(lastEnd, end);
    if (job.status === 'SUCCEEDED') counts.succeeded += 1;
    else if (job.status === 'FAILED') counts.failed += 1;
    else counts.cancelled += 1;
  }
  const running = batch.inFlight.length - ended;
  const done = counts.succeeded + counts.failed + counts.cancelled;
  const finishedAt = finishOf(batch, running, lastEnd);
  const elapsedMs = (finishedAt ?? now) - batch.runStartedAt;
  const remaining = Math.max(0, batch.items - done);
  const doneThisRun = done - (batch.settledAtRunStart ?? 0);
  const pace = elapsedMs > 0 && doneThisRun >= 3 ? doneThisRun / elapsedMs : 0;
  const active = batch.status === 'INGESTING' || batch.status === 'RUNNING';
  const finished = batch.status === 'FINISHED' && running <= 0;
  // A job of it that ran again and ended, not counted yet: the outputs are rewritten once it is.
  const final = finished && ended === 0 && outputsFinal(batch);
  return {
    id: batch.id,
    name: batch.name,
    // A finished batch with a job run again (opflow retry) runs until that job ends.
    status: batch.status === 'FINISHED' && running > 0 ? 'RUNNING' : batch.status,
    reason: batch.reason,
    workflow: batch.workflow,
    source: batch.source.uri,
    tenant: batch.tenant,
    run: batch.run,
    items: batch.items,
    totals: {
      waiting: Math.max(0, batch.items - batch.admitted),
      running,
      succeeded: counts.succeeded,
      failed: counts.failed,
      cancelled: counts.cancelled,
    },
    thisRun: { ...batch.counts, readingDone: batch.cursor.done },
    failures: failuresOf({ ...batch, settled: counts }),
    calls: counts.calls,
    billedUnits: counts.billedUnits,
    createdAt: new Date(batch.createdAt).toISOString(),
    updatedAt: new Date(batch.updatedAt).toISOString(),
    finishedAt: finishedAt === undefined ? undefined : new Date(finishedAt).toISOString(),
    elapsedMs,
    etaMs: active && pace > 0 && remaining > 0 ? Math.round(remaining / pace) : undefined,
    outputs: batchOutputKeys(batch.id),
    outputsAt: batch.outputsAt === undefined ? undefined : new Date(batch.outputsAt).toISOString(),
    outputsFinal: final,
    writingOutputs: finished && !final,
    upstreams,
    sandbox: upstreams.some((upstream) => upstream.kind === 'sandbox'),
  };
}

/**
 * When the batch finished, as its jobs say: a finished batch one of whose jobs runs again (opflow
 * retry, a resume) is not finished while that job runs, and once it ends the batch finished when its
 * last job did, not at its earlier finish (admission, counting that job, stores that finish).
 */
function finishOf(batch: Batch, running: number, lastEnd: number | undefined): number | undefined {
  if (batch.status !== 'FINISHED') return batch.finishedAt;
  if (running > 0) return undefined;
  if (lastEnd === undefined || batch.finishedAt === undefined) return batch.finishedAt ?? lastEnd;
  return Math.max(batch.finishedAt, lastEnd);
}

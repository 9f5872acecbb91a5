/**
 * The BatchStore port: records of bulk ingestions (`opflow ingest`, the S3 inbox). A batch keeps
 * where reading its source stopped (committed with each chunk, so a killed ingest resumes without
 * duplicates), its items in the order they were read, the problems of the lines that could not be
 * used, and what admission has released to the job store. Each backend has its own adapter.
 */

import type { Job, JobPriority, JobUsage } from './job-record';
import type { UpstreamIdentity } from './upstream-identity';

export const batchStatuses = ['INGESTING', 'RUNNING', 'PAUSED', 'STOPPED', 'FINISHED'] as const;
export type BatchStatus = (typeof batchStatuses)[number];

export type BatchSourceKind = 'jsonl' | 'csv' | 'folder' | 'document';

export interface BatchSource {
  kind: BatchSourceKind;
  /** A path (local) or `s3://bucket/key` (aws): the manifest's identity. */
  uri: string;
  /** The object's ETag on S3: the same upload delivered twice is not ingested twice. */
  revision?: string | undefined;
}

/** How far reading the source got: committed together with the chunk's items. */
export interface BatchCursor {
  /** Records (lines, CSV records or documents) consumed so far in this run. */
  records: number;
  /** Bytes of the manifest consumed (JSON Lines: where the next line starts). */
  bytes: number;
  /** The source has been read to its end in this run. */
  done: boolean;
}

export interface FailureBudget {
  /** `percent` of the lines read, or a `count` of failures. */
  kind: 'percent' | 'count';
  value: number;
}

export interface BatchOptions {
  selection: 'auto' | 'manual';
  deadlineMs?: number | undefined;
  failureBudget?: FailureBudget | undefined;
  /** Refuse to start, or pause, when the estimate or the billed units pass this. */
  maxUnits?: number | undefined;
  /** Items of this batch released to run at once (admission). */
  inFlight: number;
  /** Its jobs' priority against the key's other work, unless a line says otherwise; absent: normal. */
  priority?: JobPriority | undefined;
}

export interface Batch {
  id: string;
  /** The name given with --batch, else derived from the source. */
  name: string;
  tenant: string;
  /** The default workflow of its lines. */
  workflow: string;
  source: BatchSource;
  status: BatchStatus;
  /** Why the batch stopped or paused (failure budget, --max-units), for people. */
  reason?: string | undefined;
  /** Increases on every committed write. */
  version: number;
  /** Ingest runs of this batch (the same manifest ingested again starts run 2...). */
  run: number;
  cursor: BatchCursor;
  /** This run's counts: records read, items created, lines that were already items, problems. */
  counts: { records: number; created: number; existing: number; invalid: number };
  /** Items ever created; the next item's sequence number. */
  items: number;
  /** Items up to this sequence number (exclusive) have been released to the job store. */
  admitted: number;
  /** Ids of the released jobs not yet seen finished (at most `options.inFlight`). */
  inFlight: string[];
  /** Released jobs seen finished, by their final status; their usage. */
  settled: { succeeded: number; failed: number; cancelled: number; calls: number; billedUnits: number };
  /**
   * The distinct upstreams its finished jobs ran on (the sandbox, or a platform URL and key
   * fingerprint), recorded by admission as it counts them; absent on batches of earlier releases.
   */
  upstreams?: UpstreamIdentity[] | undefined;
  options: BatchOptions;
  createdAt: number;
  updatedAt: number;
  /** When the run's reading started, and how many released jobs had finished then (for the pace). */
  runStartedAt: number;
  settledAtRunStart: number;
  finishedAt?: number | undefined;
  /** A function is working on this batch until then (aws: one driver at a time). */
  driverUntil?: number | undefined;
  /** When the outputs were last written, and how long that took. */
  outputsAt?: number | undefined;
  outputsCostMs?: number | undefined;
  /**
   * The `finishedAt` of the finished batch the outputs were last written from: the outputs are the
   * final ones while it equals `finishedAt` (admission finishes a batch before its outputs are
   * rewritten; a redriven batch finishes again later). 0 from the finish until they are written;
   * absent on batches of earlier releases.
   */
  outputsOfFinish?: number | undefined;
}

/** One disclosure of a batch, waiting for admission or released as a job. */
export interface BatchItem {
  batchId: string;
  /** Order of creation in the batch, from 0. */
  seq: number;
  /** The item key: batch + disclosure id + content hash (the job's idempotency key). */
  key: string;
  /** The disclosure's own id (a manifest's `id`, a document's path in the folder). */
  id: string;
  /** Where it was read: `line 12` or a file path. */
  position: string;
  /** The ingest run that created it. */
  run: number;
  /** SHA-256 of the canonical input, first 12 hex digits: which version of the disclosure this is. */
  contentHash: string;
  workflow: string;
  label: string;
  /** The validated workflow input, inline when small, else a report store key. */
  input: { inline: unknown } | { ref: string };
  createdAt: number;
}

/** A line or document that could not be used, with where and why. */
export interface BatchProblem {
  batchId: string;
  run: number;
  /** `line 12`, `record 12 (line 14)` or a document's path. */
  position: string;
  /** The record number in the source (for ordering), from 1. */
  record: number;
  id?: string | undefined;
  reason: string;
}

export interface BatchPage {
  batches: Batch[];
  cursor?: string | undefined;
}

export interface BatchStore {
  /** Insert a batch; when one with its id exists, return that one (`created: false`). */
  create(batch: Batch): Promise<{ batch: Batch; created: boolean }>;
  get(id: string): Promise<Batch | undefined>;
  /** Write `batch` if the stored version is still `expectedVersion` (`batch.version` one more). */
  commit(batch: Batch, expectedVersion: number): Promise<boolean>;
  /** Newest first. */
  list(query: {
    tenant?: string | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  }): Promise<BatchPage>;
  /** The keys among `keys` that are items of the batch already. */
  existingKeys(batchId: string, keys: readonly string[]): Promise<Set<string>>;
  /**
   * One chunk, all or nothing: the new items and problems, and the batch (its cursor moved past the
   * chunk) on the condition of `expectedVersion`. False when another writer won or an item's key
   * exists already (the caller reads the batch again and redoes the chunk).
   */
  commitChunk(
    batch: Batch,
    expectedVersion: number,
    items: readonly BatchItem[],
    problems: readonly BatchProblem[],
  ): Promise<boolean>;
  /** Items with `seq` ≥ `fromSeq`, in order. */
  listItems(batchId: string, fromSeq: number, limit: number): Promise<BatchItem[]>;
  /** The problems of one run, in record order. */
  listProblems(batchId: string, run: number): Promise<BatchProblem[]>;
  /** The largest number of items `commitChunk` takes at once. */
  readonly maxChunkItems: number;
}

/**
 * A job of a batch that had ended runs again (a retry, a redrive, a resume of a job failed for a
 * local reason): it leaves the batch's counts of finished jobs (its status and its usage) and joins
 * the in-flight set, so admission follows it to its new end and counts it then. Called before the
 * job's own commit: if that commit never happens, admission finds the job still ended and counts it
 * as it was. A job admission has not counted yet (still in flight) is left as it is. The batch
 * keeps its status: a view of it reads its in-flight jobs as they are (`currentViewOf`), so a
 * FINISHED batch whose retried job runs shows RUNNING, and its totals follow the job to its end
 * whether or not admission runs for it again.
 */
export async function rejoinBatch(batches: BatchStore, ended: Job, now: number): Promise<Batch | undefined> {
  if (ended.batchId === undefined) return undefined;
  for (let tries = 0; tries < 20; tries++) {
    const batch = await batches.get(ended.batchId);
    if (!batch || batch.inFlight.includes(ended.id)) return batch;
    const settled = { ...batch.settled };
    if (ended.status === 'SUCCEEDED') settled.succeeded = Math.max(0, settled.succeeded - 1);
    else if (ended.status === 'FAILED') settled.failed = Math.max(0, settled.failed - 1);
    else if (ended.status === 'CANCELLED') settled.cancelled = Math.max(0, settled.cancelled - 1);
    else return batch;
    // Its usage keeps growing from here; admission adds all of it again when it ends.
    settled.calls = Math.max(0, settled.calls - ended.usage.calls);
    settled.billedUnits = Math.max(0, settled.billedUnits - ended.usage.billedUnits);
    const next: Batch = {
      ...batch,
      version: batch.version + 1,
      settled,
      inFlight: [...batch.inFlight, ended.id],
      updatedAt: now,
    };
    if (await batches.commit(next, batch.version)) return next;
  }
  throw new Error(`batch ${ended.batchId} keeps changing; its counts were not updated`);
}

/**
 * The batch once a call that came back after its job finished has added its usage to the job
 * (`recordLateUsage`, runner.ts; the job's usage went from `before` to `after`), written with the
 * job in one write. Admission counted the job's usage when it saw it finished: a job no longer in
 * flight has the difference added to the settled totals; one still in flight is counted whole
 * later. The version moves either way, so an admission that read the job before the late usage
 * loses its commit and reads the job again.
 */
export function batchWithLateUsage(
  batch: Batch,
  jobId: string,
  before: Pick<JobUsage, 'calls' | 'billedUnits'>,
  after: Pick<JobUsage, 'calls' | 'billedUnits'>,
  now: number,
): Batch {
  const settled = batch.inFlight.includes(jobId)
    ? batch.settled
    : {
        ...batch.settled,
        calls: batch.settled.calls + Math.max(0, after.calls - before.calls),
        billedUnits: batch.settled.billedUnits + Math.max(0, after.billedUnits - before.billedUnits),
      };
  return { ...batch, version: batch.version + 1, settled, updatedAt: now };
}

/**
 * A store's `commitWithBatch` (ports.ts) checks its arguments with this before it writes: each
 * version must be its expected one + 1.
 */
export function checkJobAndBatchVersions(
  job: Job,
  expectedVersion: number,
  batch: Batch,
  expectedBatchVersion: number,
): void {
  if (job.version !== expectedVersion + 1 || batch.version !== expectedBatchVersion + 1) {
    throw new RangeError(
      `job ${job.id}, batch ${batch.id}: versions must rise by 1 (${expectedVersion + 1}, ${expectedBatchVersion + 1})`,
    );
  }
}

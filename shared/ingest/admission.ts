/**
 * Admission: releasing a batch's items to the job store a few at a time. Each batch has at most
 * `options.inFlight` jobs released and unfinished, and every active batch is topped up in turn, so
 * one large batch cannot fill the queue ahead of a second batch or of a job started by hand: they
 * all meet in the same per-key rate limit with only a bounded number of this batch's jobs before
 * them. The runner and its rate limiter are untouched; fairness is decided here, at the door.
 *
 * Released jobs carry the item key as their idempotency key, so a crash between creating a job and
 * committing the batch, or two processes admitting at once, never creates a job twice.
 */
import type { Batch, BatchItem, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { JobRequestError, submitJob } from '../engine/job-commands';
import { isTerminal, type Job, type JobPriority } from '../engine/job-record';
import type { JobStore } from '../engine/ports';
import { type UpstreamIdentity, upstreamKeyOf } from '../engine/upstream-identity';
import { budgetExceeded, describeBudget } from './batch';

export interface AdmissionDeps {
  engine: JobDeps;
  batches: BatchStore;
}

const activeStatuses = new Set<Batch['status']>(['INGESTING', 'RUNNING', 'PAUSED', 'STOPPED']);

/** What one admission round did to a batch. */
export interface AdmissionResult {
  batch: Batch;
  released: number;
  settled: number;
}

/**
 * One round for one batch: notice its released jobs that finished (counting their outcome and
 * usage against the failure budget and --max-units), then release items up to its in-flight limit.
 * A batch whose source is read, whose items are all released and whose jobs are all finished
 * becomes FINISHED. A FINISHED batch whose jobs run again (retried, redriven) has them counted as
 * they end, and finishes again then.
 */
export async function admitBatch(deps: AdmissionDeps, batchId: string): Promise<AdmissionResult | undefined> {
  for (let tries = 0; tries < 20; tries++) {
    const batch = await deps.batches.get(batchId);
    if (!batch || !(activeStatuses.has(batch.status) || rejoined(batch)))
      return batch ? { batch, released: 0, settled: 0 } : undefined;
    const now = deps.engine.clock.now();
    const next: Batch = {
      ...batch,
      version: batch.version + 1,
      updatedAt: now,
      settled: { ...batch.settled },
    };
    const stillInFlight: string[] = [];
    let settled = 0;
    /** When the last job counted here ended (a finished batch finishes again then). */
    let lastEnd = 0;
    const jobs = await jobsByIds(deps.engine.store, batch.inFlight);
    for (const jobId of batch.inFlight) {
      const job = jobs.get(jobId);
      if (!job || !isTerminal(job.status)) {
        stillInFlight.push(jobId);
        continue;
      }
      settled += 1;
      lastEnd = Math.max(lastEnd, job.finishedAt ?? job.updatedAt);
      if (job.status === 'SUCCEEDED') next.settled.succeeded += 1;
      else if (job.status === 'FAILED') next.settled.failed += 1;
      else next.settled.cancelled += 1;
      next.settled.calls += job.usage.calls;
      next.settled.billedUnits += job.usage.billedUnits;
      if (job.upstream) next.upstreams = withUpstream(next.upstreams, job.upstream);
    }
    next.inFlight = stillInFlight;
    if ((next.status === 'RUNNING' || next.status === 'INGESTING') && budgetExceeded(next)) {
      next.status = 'STOPPED';
      next.reason = `failures passed the failure budget of ${describeBudget(next.options.failureBudget ?? { kind: 'count', value: 0 })}: no new items are started`;
    }
    const maxUnits = next.options.maxUnits;
    if (maxUnits !== undefined && next.settled.billedUnits >= maxUnits && next.status !== 'STOPPED') {
      if (next.status !== 'PAUSED' && next.admitted < next.items) {
        next.status = 'PAUSED';
        next.reason = `billed units reached --max-units ${maxUnits}: paused; jobs already started finish, no new item starts`;
      }
    }
    let released = 0;
    if (next.status === 'RUNNING' || next.status === 'INGESTING') {
      const room = next.options.inFlight - next.inFlight.length;
      const items =
        room > 0 && next.admitted < next.items
          ? await deps.batches.listItems(next.id, next.admitted, room)
          : [];
      for (const item of items) {
        const jobId = await release(deps, next, item);
        if (jobId) next.inFlight.push(jobId);
        next.admitted = item.seq + 1;
        released += 1;
      }
    }
    if (
      next.cursor.done &&
      next.admitted >= next.items &&
      next.inFlight.length === 0 &&
      (next.status === 'RUNNING' || next.status === 'STOPPED' || next.status === 'PAUSED')
    ) {
      if (next.status === 'RUNNING' || next.admitted >= next.items) {
        next.status = next.status === 'RUNNING' ? 'FINISHED' : next.status;
        next.finishedAt = next.status === 'FINISHED' ? now : next.finishedAt;
        // Its outputs are written after this commit (outputs.ts records when): until then they are not final.
        if (next.status === 'FINISHED') next.outputsOfFinish = 0;
      }
    }
    if (batch.status === 'FINISHED' && settled > 0) {
      // A job of the finished batch ran again (opflow retry, a redrive) and ended: it finished again
      // then, and its outputs are rewritten from its jobs as they are now (not final until they are).
      next.finishedAt = Math.max(batch.finishedAt ?? 0, lastEnd);
      next.outputsOfFinish = 0;
    }
    if (settled === 0 && released === 0 && next.status === batch.status)
      return { batch, released: 0, settled: 0 };
    if (await deps.batches.commit(next, batch.version)) return { batch: next, released, settled };
    // Another admission or the ingest wrote meanwhile: the jobs released here exist under their
    // item keys, and the next round finds them again (creating nothing) and records them.
  }
  return undefined;
}

/**
 * A finished batch with jobs in flight again: a job of it was retried or redriven (`rejoinBatch`).
 * Admission counts them as they end (nothing is released: the batch stays FINISHED).
 */
function rejoined(batch: Batch): boolean {
  return batch.status === 'FINISHED' && batch.inFlight.length > 0;
}

/** `upstreams` with `upstream` added unless one of them is the same upstream. */
export function withUpstream(
  upstreams: readonly UpstreamIdentity[] | undefined,
  upstream: UpstreamIdentity,
): UpstreamIdentity[] {
  const known = upstreams ?? [];
  const key = upstreamKeyOf(upstream);
  return known.some((one) => upstreamKeyOf(one) === key) ? [...known] : [...known, upstream];
}

/**
 * Jobs by id: one BatchGetItem per 100 on DynamoDB (`getMany`), else a few `get`s at a time, not
 * one after the other (each is a round trip).
 */
export async function jobsByIds(store: JobStore, ids: readonly string[]): Promise<Map<string, Job>> {
  const found = new Map<string, Job>();
  if (store.getMany) {
    for (const job of await store.getMany(ids)) found.set(job.id, job);
    return found;
  }
  for (let from = 0; from < ids.length; from += 16)
    for (const job of await Promise.all(ids.slice(from, from + 16).map((id) => store.get(id))))
      if (job) found.set(job.id, job);
  return found;
}

/** Creates the item's job (or finds it, by its key); undefined when the engine refuses the input. */
async function release(deps: AdmissionDeps, batch: Batch, item: BatchItem): Promise<string | undefined> {
  const stored =
    'inline' in item.input
      ? item.input.inline
      : JSON.parse(
          Buffer.from((await deps.engine.reports.get(item.input.ref))?.body ?? new Uint8Array()).toString(
            'utf8',
          ) || 'null',
        );
  const { input, selection, deadlineMs, metadata, priority } = (stored ?? {}) as {
    input?: unknown;
    selection?: 'auto' | 'manual';
    deadlineMs?: number;
    priority?: JobPriority;
    /** A disclosure form's fields (disclosure-form.ts): the job keeps them, the upstream never sees them. */
    metadata?: Record<string, string | string[]>;
  };
  try {
    const { job } = await submitJob(deps.engine, {
      workflow: item.workflow,
      input,
      tenant: batch.tenant,
      selection: { mode: selection ?? batch.options.selection },
      deadlineMs,
      label: item.label,
      metadata,
      batchId: batch.id,
      ...(priority === undefined ? {} : { priority }),
      source: 'bulk',
      idempotencyKey: item.key,
    });
    return job.id;
  } catch (error) {
    if (error instanceof JobRequestError) {
      deps.engine.log?.warn('a batch item was refused at release', {
        batchId: batch.id,
        item: item.id,
        error: error.message,
      });
      return undefined;
    }
    throw error;
  }
}

/** Batches still being read or run, newest first. */
export async function activeBatches(batches: BatchStore, tenant?: string): Promise<Batch[]> {
  const found: Batch[] = [];
  let cursor: string | undefined;
  do {
    const page = await batches.list({ tenant, limit: 200, cursor });
    found.push(...page.batches.filter((batch) => batch.status === 'INGESTING' || batch.status === 'RUNNING'));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

/** One round over every active batch, oldest first, each topped up to its own limit. */
export async function admitAll(deps: AdmissionDeps): Promise<AdmissionResult[]> {
  const results: AdmissionResult[] = [];
  for (const batch of (await activeBatches(deps.batches)).reverse()) {
    const result = await admitBatch(deps, batch.id);
    if (result) results.push(result);
  }
  return results;
}

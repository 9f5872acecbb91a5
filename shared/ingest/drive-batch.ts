/**
 * Seeing a batch through in one process: read its source (if not read yet), release its items as
 * room frees up (and those of every other active batch, in turn), and keep its outputs up to date,
 * until every released item is finished, the budget stops it, the deadline (a Lambda's time) comes,
 * or the signal aborts. Used by `opflow ingest`, `opflow batch --watch` and the ingest function.
 */
import type { Batch } from '../engine/batch-store';
import type { Job } from '../engine/job-record';
import { admitAll, admitBatch, jobsByIds } from './admission';
import { type IngestDeps, type IngestSource, ingest } from './ingest';
import { type BatchTotals, writeBatchOutputs } from './outputs';

export interface DriveBatchOptions {
  signal?: AbortSignal | undefined;
  /** Stop once this time (clock ms) has passed; the batch is left to a continuation. */
  deadline?: number | undefined;
  /** Called after every round with the batch as committed. */
  onProgress?: ((batch: Batch) => void) | undefined;
  /** How often the outputs are rewritten while the batch runs. Default: every 3 seconds. */
  outputsEveryMs?: number | undefined;
  /** Wait between admission rounds once everything is read. Default: 500 ms. */
  roundMs?: number | undefined;
  /** Resolves early when a job changes (the local pipeline tells). */
  wake?: ((listener: () => void) => () => void) | undefined;
  /** Top up every active batch, not only this one (fairness between batches of one process). */
  allBatches?: boolean | undefined;
  /** Told the keys of lines that were items already (a re-ingest). */
  onExisting?: ((keys: string[]) => Promise<void> | void) | undefined;
  /** Only follow the batch (its work happens elsewhere, e.g. in the aws functions). */
  observe?: boolean | undefined;
  /** Read the source only: no admission, no waiting (an ingest started with --no-wait on aws). */
  readOnly?: boolean | undefined;
  /**
   * End ('awaiting') once the source is read and every released job waits for a person's selection:
   * nothing moves until someone answers (`opflow resume <jobId> --select ...`), so a command that
   * waits for the batch says so instead of waiting for ever. The server keeps driving instead.
   */
  stopAtSelection?: boolean | undefined;
}

export type DriveEnd = 'finished' | 'stopped' | 'paused' | 'deadline' | 'aborted' | 'read' | 'awaiting';

/** The released jobs of a batch that wait for a selection, when all of them do (else none). */
export async function onlySelectionsLeft(deps: IngestDeps, batch: Batch): Promise<Job[]> {
  if (!batch.cursor.done || batch.inFlight.length === 0) return [];
  const found = await jobsByIds(deps.engine.store, batch.inFlight);
  const jobs: Job[] = [];
  for (const id of batch.inFlight) {
    const job = found.get(id);
    if (job?.status !== 'AWAITING_INPUT') return [];
    jobs.push(job);
  }
  return jobs;
}

/** Whether the batch has nothing left to do here. */
export function batchSettled(batch: Batch): DriveEnd | undefined {
  if (batch.status === 'FINISHED') return 'finished';
  if (batch.status === 'STOPPED' && batch.inFlight.length === 0 && batch.cursor.done) return 'stopped';
  if (batch.status === 'PAUSED' && batch.inFlight.length === 0 && batch.cursor.done) return 'paused';
  return undefined;
}

export async function driveBatch(
  deps: IngestDeps,
  source: IngestSource | undefined,
  batchId: string,
  options: DriveBatchOptions = {},
): Promise<{ batch: Batch; end: DriveEnd; totals: BatchTotals }> {
  const clock = deps.engine.clock;
  const outputsEveryMs = options.outputsEveryMs ?? 3_000;
  let lastOutputs = 0;
  let outputCost = 0;
  let totals: BatchTotals | undefined;
  const writeOutputs = async (batch: Batch, force = false) => {
    const now = Date.now();
    // An observer leaves them to the process that runs the batch (on aws the ingest function).
    if (!force && options.observe) return;
    // A large batch's outputs take a while to write: never spend more than a tenth of the time on them.
    if (!force && now - lastOutputs < Math.max(outputsEveryMs, outputCost * 10)) return;
    totals = await writeBatchOutputs(deps, batch);
    outputCost = Date.now() - now;
    lastOutputs = Date.now();
  };
  const admit = async () => {
    if (options.readOnly || options.observe) return;
    if (options.allBatches) await admitAll(deps);
    else await admitBatch(deps, batchId);
  };
  const timeUp = () => options.deadline !== undefined && clock.now() >= options.deadline;
  let batch = await deps.batches.get(batchId);
  if (!batch) throw new Error(`no batch ${batchId}`);

  if (!batch.cursor.done && source && !options.observe) {
    batch =
      (await ingest(deps, source, batchId, {
        deadline: options.deadline,
        onExisting: options.onExisting,
        onChunk: async (committed) => {
          await admit();
          options.onProgress?.(committed);
          await writeOutputs(committed);
          if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
        },
      }).catch((error) => {
        if (options.signal?.aborted) return undefined;
        throw error;
      })) ??
      (await deps.batches.get(batchId)) ??
      batch;
  }
  const end = async (why: DriveEnd) => {
    const latest = (await deps.batches.get(batchId)) ?? (batch as Batch);
    await writeOutputs(latest, true);
    return { batch: latest, end: why, totals: totals as BatchTotals };
  };
  if (options.signal?.aborted) return end('aborted');
  if (!batch.cursor.done && !options.observe) return end('deadline');
  if (options.readOnly) return end('read');
  for (;;) {
    await admit();
    batch = (await deps.batches.get(batchId)) ?? batch;
    options.onProgress?.(batch);
    const settled = batchSettled(batch);
    if (settled) return end(settled);
    if (options.stopAtSelection && (await onlySelectionsLeft(deps, batch)).length > 0) return end('awaiting');
    if (options.signal?.aborted) return end('aborted');
    if (timeUp()) return end('deadline');
    await writeOutputs(batch);
    await pause(options.roundMs ?? 500, options.signal, options.wake);
  }
}

function pause(ms: number, signal?: AbortSignal, wake?: (listener: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    let unsubscribe: (() => void) | undefined;
    const done = () => {
      clearTimeout(timer);
      unsubscribe?.();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    // A job change is a reason to look sooner, but not at every change of a busy pool.
    unsubscribe = wake?.(() => setTimeout(done, 50));
  });
}

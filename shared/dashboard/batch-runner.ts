/**
 * Batches in a long-lived process (`opflow serve`, `opflow mcp`): every few seconds one admission
 * round over the active batches (release items as room frees up, count finished jobs, finish the
 * batch) and their outputs rewritten, so a batch ingested elsewhere, or redriven from the
 * dashboard, goes on and its figures stay current while the process runs; and ingests started here
 * (the MCP `ingest` tool) read their source in the background. Admission is safe with any number of
 * processes at once (conditional commits, item keys as idempotency keys).
 */
import type { Batch, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { errorMessage } from '../errors/error-message';
import { admitAll, admitBatch } from '../ingest/admission';
import { driveBatch } from '../ingest/drive-batch';
import type { IngestSource } from '../ingest/ingest';
import { writeBatchOutputs } from '../ingest/outputs';

/**
 * Stopped or paused batches with jobs still under way, and finished ones whose jobs run again (a
 * retry, a redrive): admission counts those as they end, and their outputs are rewritten.
 */
async function settlingBatches(batches: BatchStore): Promise<Batch[]> {
  const found: Batch[] = [];
  let cursor: string | undefined;
  do {
    const page = await batches.list({ limit: 200, cursor });
    found.push(
      ...page.batches.filter(
        (batch) =>
          (batch.status === 'STOPPED' || batch.status === 'PAUSED' || batch.status === 'FINISHED') &&
          batch.inFlight.length > 0,
      ),
    );
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

export interface BatchRunner {
  /** Reads the batch's source and sees it through, in the background. */
  drive(source: IngestSource, batchId: string): void;
  /** Stops the rounds and the ingests under way (they continue from their committed position later). */
  stop(): Promise<void>;
}

export function startBatchRunner(options: {
  deps: JobDeps;
  batches: BatchStore;
  intervalMs?: number | undefined;
}): BatchRunner {
  const deps = { engine: options.deps, batches: options.batches };
  const abort = new AbortController();
  const running = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  const tick = () => {
    round = (async () => {
      try {
        const results = await admitAll(deps);
        // Stopped and paused batches release nothing (admitAll passes them by), but their jobs
        // under way still end: count those, so their figures and outputs stay true.
        for (const batch of await settlingBatches(options.batches)) {
          const result = await admitBatch(deps, batch.id);
          if (result) results.push(result);
        }
        for (const result of results) {
          if (result.released > 0 || result.settled > 0) await writeBatchOutputs(deps, result.batch);
        }
      } catch (error) {
        options.deps.log?.warn('a batch admission round failed; the next one tries again', {
          error: errorMessage(error),
        });
      }
      if (!abort.signal.aborted) timer = setTimeout(tick, options.intervalMs ?? 2_000);
    })();
  };
  timer = setTimeout(tick, 0);
  return {
    drive(source, batchId) {
      const work = driveBatch(deps, source, batchId, { signal: abort.signal, allBatches: true })
        .catch((error) =>
          options.deps.log?.error('a batch ingest stopped', {
            batchId,
            error: errorMessage(error),
          }),
        )
        .finally(() => running.delete(work));
      running.add(work);
    },
    async stop() {
      abort.abort(new Error('stopping'));
      clearTimeout(timer);
      await round;
      await Promise.allSettled([...running]);
    },
  };
}

/**
 * Batches in a long-lived process (`opflow serve`, `opflow mcp`): every few seconds one admission
 * round over the active batches (release items as room frees up, count finished jobs, finish the
 * batch) and their outputs rewritten, so a batch ingested elsewhere, or redriven from the
 * dashboard, goes on and its figures stay current while the process runs; and ingests started here
 * (the MCP `ingest` tool) read their source in the background. Admission is safe with any number of
 * processes at once (conditional commits, item keys as idempotency keys).
 */
import type { BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import { admitAll } from '../ingest/admission';
import { driveBatch } from '../ingest/drive-batch';
import type { IngestSource } from '../ingest/ingest';
import { writeBatchOutputs } from '../ingest/outputs';

export interface BatchRunner {
  /** Reads the batch's source and sees it through, in the background. */
  drive(source: IngestSource, batchId: string): void;
  /** Stops the rounds and the ingests under way (they continue from their committed position later). */
  stop(): Promise<void>;
}

export function startBatchRunner(options: {
  deps: EngineDeps;
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
        for (const result of await admitAll(deps)) {
          if (result.released > 0 || result.settled > 0) await writeBatchOutputs(deps, result.batch);
        }
      } catch (error) {
        options.deps.log?.warn('a batch admission round failed; the next one tries again', {
          error: error instanceof Error ? error.message : String(error),
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
            error: error instanceof Error ? error.message : String(error),
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

/**
 * A dry run of an ingest: every record of the source validated as `ingest` reads it, the items that
 * exist already counted and those still to run, nothing stored. `opflow ingest --dry-run` previews
 * with the document reader; the dashboard's upload check previews a manifest alone, without it.
 */
import type { BatchProblem } from '../engine/batch-store';
import { isTerminal } from '../engine/job-record';
import { batchIdFor, newBatch } from './batch';
import {
  checkIngestRequest,
  type DocumentInputReader,
  type IngestDeps,
  type IngestRequest,
  type IngestSource,
  prepareRecord,
  recordsOf,
} from './ingest-item';

/** What a dry run found: every line validated, nothing stored, nothing started. */
export interface IngestPreview {
  records: number;
  /** Usable lines, by workflow. */
  items: number;
  byWorkflow: Record<string, number>;
  /** Of the usable lines, those that are items of the batch already (ingested before). */
  existing: number;
  /**
   * Usable lines by workflow that would still spend calls: new items, and items ingested before
   * whose job has not finished (a finished one, succeeded or failed, is not run again by an ingest).
   */
  toRun: Record<string, number>;
  /** What the batch (when it exists) billed already. */
  billedBefore: number;
  problems: Omit<BatchProblem, 'batchId' | 'run'>[];
}

/**
 * Validates every record of the source as `ingest` would, storing nothing. A document a record
 * names is read with `documents` (document-input.ts's reader); without it such a record is a
 * problem, and nothing of the document extractors is loaded.
 */
export async function previewRecords(
  deps: IngestDeps,
  input: IngestSource,
  request: IngestRequest,
  documents?: DocumentInputReader,
): Promise<IngestPreview> {
  checkIngestRequest(request);
  const id = batchIdFor(input.source, request.tenant, request.batchName);
  const shape = newBatch({
    id,
    name: request.batchName ?? id,
    tenant: request.tenant,
    workflow: request.workflow,
    source: input.source,
    options: request.options,
    now: deps.engine.clock.now(),
  });
  const stored = await deps.batches.get(id);
  const preview: IngestPreview = {
    records: 0,
    items: 0,
    byWorkflow: {},
    existing: 0,
    toRun: {},
    billedBefore: stored?.settled.billedUnits ?? 0,
    problems: [],
  };
  const seen = new Map<string, string>();
  let keys: { key: string; workflow: string }[] = [];
  const countExisting = async () => {
    const found =
      stored && keys.length > 0
        ? await deps.batches.existingKeys(
            id,
            keys.map((entry) => entry.key),
          )
        : new Set<string>();
    preview.existing += found.size;
    for (const { key, workflow } of keys) {
      if (found.has(key)) {
        const job = await deps.engine.store.findByIdempotencyKey(request.tenant, key);
        if (job && isTerminal(job.status)) continue;
      }
      preview.toRun[workflow] = (preview.toRun[workflow] ?? 0) + 1;
    }
    keys = [];
  };
  for await (const record of recordsOf(input, shape)) {
    preview.records = record.record;
    const prepared = await prepareRecord(deps, input, shape, record, seen, { documents, dryRun: true });
    if (prepared.kind === 'problem') preview.problems.push(prepared.problem);
    else if (prepared.kind === 'item') {
      preview.items += 1;
      preview.byWorkflow[prepared.item.workflow] = (preview.byWorkflow[prepared.item.workflow] ?? 0) + 1;
      keys.push({ key: prepared.item.key, workflow: prepared.item.workflow });
      if (keys.length >= 500) await countExisting();
    }
  }
  await countExisting();
  return preview;
}

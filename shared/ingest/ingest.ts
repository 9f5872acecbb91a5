/**
 * The ingestion core, the same on both backends: read a source record by record, validate each line
 * (zod, with its line number), turn it into an item whose key is batch + id + content hash, and
 * commit items, problems and the position in the source together, one chunk at a time. A killed
 * ingest (or a Lambda out of time) continues from the last committed chunk; an item whose key
 * exists is never created twice, so ingesting the same manifest again creates nothing.
 *
 * What one record becomes is ingest-item.ts's; this module reads the documents records name
 * (document-input.ts) and commits. A dry run is ingest-preview.ts's.
 */
import type { Batch, BatchItem, BatchProblem, BatchSource, BatchStore } from '../engine/batch-store';
import { batchIdFor, budgetExceeded, describeBudget, newBatch } from './batch';
import { readDocumentInput } from './document-input';
import {
  checkIngestRequest,
  IngestConflict,
  type IngestDeps,
  IngestRefused,
  type IngestRequest,
  type IngestSource,
  idsOfRun,
  type Prepared,
  prepareRecord,
  recordsOf,
} from './ingest-item';
import { type IngestPreview, previewRecords } from './ingest-preview';
import { withMaxUnits } from './limits';
import type { SourceRecord } from './sources';

export {
  checkIngestRequest,
  IngestConflict,
  type IngestDeps,
  type IngestPreview,
  IngestRefused,
  type IngestRequest,
  type IngestSource,
};

/** The outcome of `ingest` for people and scripts. */
export interface IngestProgress {
  batch: Batch;
  /** This run's new problems, in order (also kept in the batch's record). */
  problems: BatchProblem[];
}

/**
 * The batch for this source: created, or the existing one continued (an unfinished run resumes at
 * its committed position) or, when its last run read the whole source, started on a new run.
 */
export async function openBatch(
  deps: IngestDeps,
  source: BatchSource,
  request: IngestRequest,
): Promise<{ batch: Batch; state: 'new' | 'resumed' | 'rerun' | 'same' }> {
  checkIngestRequest(request);
  const id = batchIdFor(source, request.tenant, request.batchName);
  const now = deps.engine.clock.now();
  const name = request.batchName ?? id;
  const fresh = newBatch({
    id,
    name,
    tenant: request.tenant,
    workflow: request.workflow,
    source,
    options: request.options,
    now,
  });
  for (let tries = 0; tries < 10; tries++) {
    const { batch, created } = await deps.batches.create(fresh);
    if (created) return { batch, state: 'new' };
    if (batch.tenant !== request.tenant)
      throw new IngestRefused(`batch ${id} belongs to another tenant; choose another --batch name`);
    const same =
      source.revision !== undefined &&
      batch.source.uri === source.uri &&
      batch.source.revision === source.revision;
    if (!batch.cursor.done || same) {
      // An unfinished run resumes; the same upload announced twice (an S3 event and the CLI's start)
      // was read already. Either way a new --max-units is taken (raising it continues a paused batch).
      const state = batch.cursor.done ? 'same' : 'resumed';
      if (request.options.maxUnits === batch.options.maxUnits) return { batch, state };
      const next = withMaxUnits(batch, request.options.maxUnits, now);
      if (await deps.batches.commit(next, batch.version)) return { batch: next, state };
      continue;
    }
    const next: Batch = {
      ...batch,
      version: batch.version + 1,
      run: batch.run + 1,
      workflow: request.workflow,
      source,
      options: { ...request.options },
      status: 'INGESTING',
      reason: undefined,
      cursor: { records: 0, bytes: 0, done: false },
      counts: { records: 0, created: 0, existing: 0, invalid: 0 },
      updatedAt: now,
      runStartedAt: now,
      settledAtRunStart: batch.settled.succeeded + batch.settled.failed + batch.settled.cancelled,
      finishedAt: undefined,
    };
    if (await deps.batches.commit(next, batch.version)) return { batch: next, state: 'rerun' };
  }
  throw new IngestConflict(`batch ${id} keeps changing; try again`);
}

export interface IngestOptions {
  /** Stop (after committing) once this time is passed: a Lambda hands over to a continuation. */
  deadline?: number | undefined;
  /** After every committed chunk (admission, progress). */
  onChunk?: ((batch: Batch, problems: BatchProblem[]) => Promise<void> | void) | undefined;
  /** Told the keys of lines that were items of the batch already (a re-ingest). */
  onExisting?: ((keys: string[]) => Promise<void> | void) | undefined;
  /** Records per chunk (default and most: the store's `maxChunkItems`). */
  chunkSize?: number | undefined;
}

/**
 * Reads the batch's source from its committed position to the end (or the deadline), committing
 * chunk by chunk. Returns the batch as committed last; `cursor.done` tells whether the source was
 * read to its end.
 */
export async function ingest(
  deps: IngestDeps,
  input: IngestSource,
  batchId: string,
  options: IngestOptions = {},
): Promise<Batch> {
  let batch = await mustGetBatch(deps.batches, batchId);
  if (batch.cursor.done) return batch;
  const chunkSize = Math.max(
    1,
    Math.min(options.chunkSize ?? deps.batches.maxChunkItems, deps.batches.maxChunkItems),
  );
  const seen = await idsOfRun(input, batch);
  let records: Prepared[] = [];
  let last: SourceRecord | undefined;
  const flush = async (done: boolean) => {
    const problems: BatchProblem[] = [];
    const existing: string[] = [];
    batch = await commitPrepared(deps, batch, records, last, done, problems, existing);
    records = [];
    if (existing.length > 0) await options.onExisting?.(existing);
    await options.onChunk?.(batch, problems);
  };
  for await (const record of recordsOf(input, batch)) {
    last = record;
    records.push(await prepareRecord(deps, input, batch, record, seen, { documents: readDocumentInput }));
    if (records.length >= chunkSize) {
      await flush(false);
      if (options.deadline !== undefined && deps.engine.clock.now() >= options.deadline) return batch;
    }
  }
  await flush(true);
  return batch;
}

async function mustGetBatch(batches: BatchStore, id: string): Promise<Batch> {
  const batch = await batches.get(id);
  if (!batch) throw new IngestRefused(`no batch ${id}`);
  return batch;
}

/** Commits one chunk; on a conflict with admission (which writes the batch too) it redoes it on the newer batch. */
async function commitPrepared(
  deps: IngestDeps,
  start: Batch,
  prepared: Prepared[],
  last: SourceRecord | undefined,
  done: boolean,
  problemsOut: BatchProblem[],
  existingOut: string[],
): Promise<Batch> {
  let batch = start;
  const startRecords = start.cursor.records;
  for (let tries = 0; tries < 50; tries++) {
    const now = deps.engine.clock.now();
    const items = prepared.flatMap((entry) => (entry.kind === 'item' ? [entry.item] : []));
    const existing = await deps.batches.existingKeys(
      batch.id,
      items.map((item) => item.key),
    );
    const inChunk = new Set<string>();
    const fresh: BatchItem[] = [];
    for (const item of items) {
      if (existing.has(item.key) || inChunk.has(item.key)) continue;
      inChunk.add(item.key);
      fresh.push({ ...item, batchId: batch.id, seq: batch.items + fresh.length, createdAt: now });
    }
    const problems: BatchProblem[] = prepared.flatMap((entry) =>
      entry.kind === 'problem' ? [{ ...entry.problem, batchId: batch.id, run: batch.run }] : [],
    );
    const counts = {
      records: last ? last.record : batch.counts.records,
      created: batch.counts.created + fresh.length,
      existing: batch.counts.existing + (items.length - fresh.length),
      invalid: batch.counts.invalid + problems.length,
    };
    let next: Batch = {
      ...batch,
      version: batch.version + 1,
      cursor: {
        records: last ? last.record : batch.cursor.records,
        bytes: last?.bytesEnd ?? batch.cursor.bytes,
        done,
      },
      counts,
      items: batch.items + fresh.length,
      updatedAt: now,
      status: done && batch.status === 'INGESTING' ? 'RUNNING' : batch.status,
    };
    if (budgetExceeded(next) && (next.status === 'INGESTING' || next.status === 'RUNNING')) {
      next = {
        ...next,
        status: 'STOPPED',
        reason: `failures passed the failure budget of ${describeBudget(next.options.failureBudget ?? { kind: 'count', value: 0 })}: no new items are started`,
      };
    }
    if (await deps.batches.commitChunk(next, batch.version, fresh, problems)) {
      problemsOut.push(...problems);
      existingOut.push(...items.filter((item) => existing.has(item.key)).map((item) => item.key));
      return next;
    }
    const reread = await mustGetBatch(deps.batches, batch.id);
    if (reread.cursor.records !== startRecords || reread.run !== start.run)
      throw new IngestConflict(`batch ${batch.id} is being ingested by another process`);
    batch = reread;
  }
  throw new IngestConflict(`batch ${batch.id} keeps changing; try again`);
}

/** Validates every record of the source as `ingest` would (documents read too), storing nothing. */
export function previewIngest(
  deps: IngestDeps,
  input: IngestSource,
  request: IngestRequest,
): Promise<IngestPreview> {
  return previewRecords(deps, input, request, readDocumentInput);
}

/**
 * One document added to a batch on its own (a file uploaded to the inbox): the batch is created if
 * needed (as a source read to its end), the document is validated like a folder's, and its item (or
 * its problem) is committed. The same document again is no new item; a changed one is.
 */
export async function addDocument(
  deps: IngestDeps,
  input: IngestSource,
  request: IngestRequest & { batchName: string },
  documentId: string,
): Promise<Batch> {
  checkIngestRequest(request);
  const now = deps.engine.clock.now();
  const fresh = newBatch({
    id: batchIdFor(input.source, request.tenant, request.batchName),
    name: request.batchName,
    tenant: request.tenant,
    workflow: request.workflow,
    source: input.source,
    options: request.options,
    now,
  });
  const { batch: stored } = await deps.batches.create({
    ...fresh,
    status: 'RUNNING',
    cursor: { records: 0, bytes: 0, done: true },
  });
  if (stored.tenant !== request.tenant)
    throw new IngestRefused(`batch ${stored.id} belongs to another tenant; choose another batch folder`);
  let batch = stored;
  for (let tries = 0; tries < 20; tries++) {
    const record: SourceRecord = {
      record: batch.counts.records + 1,
      position: documentId,
      document: documentId,
    };
    const prepared = await prepareRecord(deps, input, batch, record, new Map(), {
      documents: readDocumentInput,
    });
    const problems: BatchProblem[] = [];
    const existing: string[] = [];
    try {
      const next = await commitPrepared(deps, batch, [prepared], record, true, problems, existing);
      if (next.items > batch.items && next.status === 'FINISHED') {
        const reopened = {
          ...next,
          version: next.version + 1,
          status: 'RUNNING' as const,
          finishedAt: undefined,
        };
        if (await deps.batches.commit(reopened, next.version)) return reopened;
      }
      return next;
    } catch (error) {
      if (!(error instanceof IngestConflict)) throw error;
      batch = await mustGetBatch(deps.batches, batch.id);
    }
  }
  throw new IngestConflict(`batch ${batch.id} keeps changing; try again`);
}

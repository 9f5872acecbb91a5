/**
 * The ingestion core, the same on both backends: read a source record by record, validate each line
 * (zod, with its line number), turn it into an item whose key is batch + id + content hash, and
 * commit items, problems and the position in the source together, one chunk at a time. A killed
 * ingest (or a Lambda out of time) continues from the last committed chunk; an item whose key
 * exists is never created twice, so ingesting the same manifest again creates nothing.
 */
import * as z from 'zod';
import type { DisclosureFormConfig } from '../config/disclosure-form-config';
import type {
  Batch,
  BatchItem,
  BatchOptions,
  BatchProblem,
  BatchSource,
  BatchStore,
} from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { inlineInputLimitBytes, tenantNameSchema } from '../engine/job-commands';
import { isTerminal, type Job, jobPriorities } from '../engine/job-record';
import { tenantUpstreamKey } from '../engine/upstream-identity';
import { stepContext, type Workflow } from '../engine/workflow';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import { FileRefused } from '../files/bounded-read';
import { requestSchemas } from '../openplatform/schemas/requests';
import {
  batchIdFor,
  batchNameSchema,
  budgetExceeded,
  contentHashOf,
  describeBudget,
  itemKeyOf,
  newBatch,
  sha256,
} from './batch';
import {
  type DisclosureMetadata,
  disclosureInput,
  disclosureLabel,
  loadDisclosureParsers,
} from './disclosure-form';
import { DocumentProblem, extractDocument } from './documents';
import { withMaxUnits } from './limits';
import { type OpenBytes, readCsv, readJsonLines, type SourceRecord } from './sources';

export interface IngestDeps {
  engine: JobDeps;
  batches: BatchStore;
  /** How disclosure forms are read (the config file's `disclosureForm`); default: the defaults. */
  disclosureForm?: DisclosureFormConfig | undefined;
}

/** Where a batch's records and the documents they name come from. */
export interface IngestSource {
  source: BatchSource;
  /** The manifest's bytes (jsonl, csv). */
  openBytes?: OpenBytes | undefined;
  /** A folder's documents in sorted order, from record `skip` on (folder). */
  listDocuments?: ((skip: number) => AsyncIterable<SourceRecord>) | undefined;
  /** A document's bytes by its path relative to the manifest's folder (or the folder). */
  readDocument(relativePath: string): Promise<Uint8Array>;
}

export interface IngestRequest {
  /** --batch; default: named after the manifest. */
  batchName?: string | undefined;
  tenant: string;
  workflow: string;
  options: BatchOptions;
}

/** Fields of a manifest line that are not workflow input. */
const reservedFields = ['id', 'workflow', 'file', 'select', 'deadline', 'priority'] as const;

const lineSchema = z.looseObject({
  id: z
    .union([z.string(), z.number()], { error: "id: the disclosure's id is required (a string or a number)" })
    .transform(String)
    .pipe(
      z
        .string()
        .trim()
        .min(1, { error: 'id: the id is empty' })
        .max(200, { error: 'id: at most 200 characters' }),
    ),
  workflow: z.string({ error: 'workflow: must be a workflow name' }).trim().min(1).optional(),
  file: z.string({ error: 'file: must be a path relative to the manifest' }).trim().min(1).optional(),
  select: z.enum(['auto', 'manual'], { error: 'select: must be "auto" or "manual"' }).optional(),
  deadline: z.string({ error: 'deadline: a duration such as 2h' }).optional(),
  priority: z
    .enum(jobPriorities, { error: `priority: must be one of ${jobPriorities.join(', ')}` })
    .optional(),
});

/** What one record became. */
type Prepared =
  | { kind: 'item'; item: Omit<BatchItem, 'seq' | 'batchId' | 'createdAt'>; record: SourceRecord }
  | { kind: 'problem'; problem: Omit<BatchProblem, 'batchId' | 'run'> }
  | { kind: 'blank' };

/** The outcome of `ingest` for people and scripts. */
export interface IngestProgress {
  batch: Batch;
  /** This run's new problems, in order (also kept in the batch's record). */
  problems: BatchProblem[];
}

export class IngestConflict extends Error {
  override readonly name = 'IngestConflict';
}

/** A batch or source the ingest refuses (wrong tenant, unknown workflow...). */
export class IngestRefused extends Error {
  override readonly name = 'IngestRefused';
}

/**
 * Refuses a tenant or batch name that no entry point may record, before anything is: the same rule
 * as a job's tenant, so no item is ever stored whose job could not be created. `names` are what the
 * caller calls them (`--tenant`, the `opflow-tenant` of an upload...).
 */
export function checkIngestRequest(
  request: Pick<IngestRequest, 'tenant' | 'batchName'>,
  names: { tenant: string; batchName: string } = { tenant: 'tenant', batchName: 'batch name' },
): void {
  const tenant = tenantNameSchema.safeParse(request.tenant);
  if (!tenant.success)
    throw new IngestRefused(
      `${names.tenant}: "${printable(request.tenant)}" is not a tenant name: ${tenant.error.issues[0]?.message}`,
    );
  if (request.batchName === undefined) return;
  const batch = batchNameSchema.safeParse(request.batchName);
  if (!batch.success)
    throw new IngestRefused(
      `${names.batchName}: "${printable(request.batchName)}" is not a batch name: ${batch.error.issues[0]?.message}`,
    );
}

/** A name as it may be shown on a terminal: control characters escaped, at most 80 characters. */
function printable(text: string): string {
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text).slice(1, -1);
  return shown;
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
    records.push(await prepare(deps, input, batch, record, seen));
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

function recordsOf(input: IngestSource, batch: Batch): AsyncIterable<SourceRecord> {
  const { cursor } = batch;
  switch (batch.source.kind) {
    case 'jsonl':
      if (!input.openBytes) throw new Error('a JSON Lines source needs openBytes');
      return readJsonLines(input.openBytes, cursor.bytes, cursor.records);
    case 'csv':
      if (!input.openBytes) throw new Error('a CSV source needs openBytes');
      return readCsv(input.openBytes, cursor.records);
    case 'folder':
      if (!input.listDocuments) throw new Error('a folder source needs listDocuments');
      return input.listDocuments(cursor.records);
    case 'document':
      return (async function* () {
        if (cursor.records === 0) {
          const id = batch.source.uri.split('/').pop() ?? batch.source.uri;
          yield { record: 1, position: id, document: id };
        }
      })();
  }
}

/**
 * Ids read in this run so far, with where each was first seen. A resumed run reads the source again
 * up to its committed position (ids only: nothing is validated or stored again), so a duplicate of
 * an id met before the interruption is still reported, whatever became of its first line.
 */
async function idsOfRun(input: IngestSource, batch: Batch): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  if (batch.cursor.records === 0) return seen;
  const fromStart = { ...batch, cursor: { records: 0, bytes: 0, done: false } };
  for await (const record of recordsOf(input, fromStart)) {
    if (record.record > batch.cursor.records) break;
    const id = record.document ?? (record.value ? lineSchema.safeParse(record.value).data?.id : undefined);
    if (id !== undefined && !seen.has(id)) seen.set(id, record.position);
  }
  return seen;
}

async function prepare(
  deps: IngestDeps,
  input: IngestSource,
  batch: Batch,
  record: SourceRecord,
  seen: Map<string, string>,
  dryRun = false,
): Promise<Prepared> {
  const problem = (reason: string, id?: string): Prepared => ({
    kind: 'problem',
    problem: { position: record.position, record: record.record, id, reason },
  });
  if (record.error) return problem(record.error);
  let fields: Record<string, unknown>;
  let id: string;
  let file: string | undefined;
  let workflowName = batch.workflow;
  let select = batch.options.selection;
  let deadlineMs = batch.options.deadlineMs;
  let priority = batch.options.priority;
  if (record.document !== undefined) {
    id = record.document;
    file = record.document;
    fields = {};
  } else {
    if (!record.value) return { kind: 'blank' };
    // A NUL in a file is refused (binary); the same character written as \u0000 in JSON is too.
    const withNul = Object.entries(record.value).find(([, value]) =>
      JSON.stringify(value)?.includes('\\u0000'),
    );
    if (withNul) return problem(`${withNul[0]}: holds a NUL character (\\u0000), which a text never has`);
    const line = lineSchema.safeParse(record.value);
    if (!line.success) {
      const rawId = record.value.id;
      return problem(
        formatIssues(line.error),
        typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined,
      );
    }
    id = line.data.id;
    file = line.data.file;
    workflowName = line.data.workflow ?? workflowName;
    select = line.data.select ?? select;
    priority = line.data.priority ?? priority;
    if (line.data.deadline !== undefined) {
      const parsed = parseDurationMs(line.data.deadline);
      if (parsed === undefined)
        return problem(`deadline: a duration such as 90s, 30m, 2h or 1d, not "${line.data.deadline}"`, id);
      deadlineMs = parsed;
    }
    fields = Object.fromEntries(
      Object.entries(line.data).filter(([name]) => !(reservedFields as readonly string[]).includes(name)),
    );
  }
  const firstSeen = seen.get(id);
  if (firstSeen !== undefined) return problem(`duplicate id "${id}" (first at ${firstSeen})`, id);
  seen.set(id, record.position);

  const workflow = deps.engine.workflows.get(workflowName);
  if (!workflow)
    return problem(
      `unknown workflow "${workflowName}"; known: ${[...deps.engine.workflows.keys()].sort().join(', ')}`,
      id,
    );

  let candidate: unknown = fields;
  let metadata: DisclosureMetadata | undefined;
  if (file !== undefined && record.document === undefined) {
    // The text comes from the file or from the line, never both: which one a line with both meant
    // cannot be guessed, and taking either silently would run the wrong disclosure.
    const both = textFieldsOf(workflow).filter((name) => fields[name] !== undefined);
    if (both.length > 0)
      return problem(
        `both file and ${both.join(', ')} are given: the ${both.join(', ')} of ${workflow.name} comes from the file or from the line, not both; remove one`,
        id,
      );
  }
  if (file !== undefined) {
    // Relative to the manifest; in a bucket it may not climb out of the manifest's folder.
    const inBucket = batch.source.uri.startsWith('s3://');
    if (
      record.document === undefined &&
      (/^([\\/]|[A-Za-z]:)/.test(file) || (inBucket && file.split(/[\\/]/).includes('..')))
    )
      return problem(
        `file: "${file}" must be a path relative to the manifest${inBucket ? ', inside its folder' : ''}`,
        id,
      );
    let bytes: Uint8Array;
    try {
      bytes = await input.readDocument(file);
    } catch (error) {
      const code = (error as { code?: string }).code;
      return problem(
        code === 'ENOENT' || code === 'NoSuchKey'
          ? `file: ${file} does not exist`
          : error instanceof FileRefused
            ? `file: ${file}: ${error.reason}`
            : `file: ${file} cannot be read: ${errorMessage(error)}`,
        id,
      );
    }
    try {
      // An image (a product photo) is the input of a workflow that takes images, judged by its schema.
      const image = workflow.fromImage && /\.(png|jpe?g)$/i.test(file) ? workflow.fromImage : undefined;
      const document = image ? undefined : await extractDocument(file, bytes);
      if (image)
        candidate = {
          ...(image(bytes, file.split(/[\\/]/).at(-1) ?? file) as Record<string, unknown>),
          ...fields,
        };
      else if (document?.kind === 'json') candidate = { ...document.value, ...fields };
      else if (!workflow.fromText)
        return problem(`${workflow.name} takes JSON input, not the text of ${file}`, id);
      else {
        // A disclosure form's front matter stays with the job (metadata), never in its input.
        await loadDisclosureParsers();
        const read = disclosureInput(workflow, document?.text ?? '', file, deps.disclosureForm);
        metadata = read.metadata;
        candidate = { ...(read.input as Record<string, unknown>), ...fields };
      }
    } catch (error) {
      if (error instanceof DocumentProblem) return problem(`file: ${file}: ${error.message}`, id);
      return problem(`file: ${file}: ${errorMessage(error)}`, id);
    }
  }
  const parsed = workflow.input.safeParse(candidate);
  if (!parsed.success) return problem(`refused by ${workflow.name}: ${formatIssues(parsed.error)}`, id);
  const limits = platformLimitProblem(workflow, parsed.data, deps.engine.clock.now());
  if (limits) return problem(`over the platform's limits: ${limits}`, id);

  const options = { selection: select, ...(deadlineMs === undefined ? {} : { deadlineMs }) };
  // The upstream is part of what is run: an item done on the sandbox is not done on the platform.
  const upstream = await tenantUpstreamKey(deps.engine, batch.tenant);
  const contentHash = contentHashOf(
    workflow.name,
    parsed.data,
    upstream === undefined || upstream === 'sandbox' ? options : { ...options, upstream },
  );
  const key = itemKeyOf(batch.id, id, contentHash);
  const docket = metadata?.docket;
  const label = typeof docket === 'string' ? disclosureLabel(id, metadata) : labelOf(parsed.data, id);
  // The priority is not part of what is run (nor of the item's key): how soon, not what.
  const kept = {
    input: parsed.data,
    ...options,
    ...(priority === undefined || priority === 'normal' ? {} : { priority }),
    ...(metadata ? { metadata } : {}),
  };
  const serialized = JSON.stringify(kept);
  let stored: BatchItem['input'];
  if (Buffer.byteLength(serialized) > inlineInputLimitBytes && dryRun) stored = { ref: '(dry run)' };
  else if (Buffer.byteLength(serialized) > inlineInputLimitBytes) {
    const ref = `batches/${batch.id}/inputs/${sha256(key).slice(0, 32)}.json`;
    await deps.engine.reports.put(ref, serialized, 'application/json');
    stored = { ref };
  } else stored = { inline: kept };
  return {
    kind: 'item',
    record,
    item: {
      key,
      id,
      position: record.position,
      run: batch.run,
      contentHash,
      workflow: workflow.name,
      label,
      input: stored,
    },
  };
}

const textFields = new WeakMap<Workflow, string[]>();

/** The input fields a workflow fills from a document's text (`query`, `text`...; not the title). */
function textFieldsOf(workflow: Workflow): string[] {
  let names = textFields.get(workflow);
  if (!names) {
    const shape = workflow.fromText?.('text', 'document.txt');
    names = shape && typeof shape === 'object' ? Object.keys(shape).filter((name) => name !== 'title') : [];
    textFields.set(workflow, names);
  }
  return names;
}

/** A label for listings: the input's title, else the id. */
function labelOf(input: unknown, id: string): string {
  const title = (input as { title?: unknown }).title;
  return (typeof title === 'string' && title.trim() !== '' ? title : id).slice(0, 200);
}

/** The first call's request, checked against the operation's own limits (lengths the platform refuses). */
function platformLimitProblem(workflow: Workflow, input: unknown, now: number): string | undefined {
  try {
    const first = workflow.start
      ? workflow.steps.find((step) => step.name === workflow.start?.(input))
      : workflow.steps[0];
    if (!first || first.kind === 'fetch' || first.kind === 'request') return undefined;
    const job = { id: 'ingest-check', context: {}, selections: {} } as unknown as Job;
    const request = first.request(stepContext({ job, input, context: {}, selections: {}, outputs: {}, now }));
    const schema = (requestSchemas as Record<string, z.ZodType | undefined>)[first.operation];
    const checked = schema?.safeParse(request);
    return checked && !checked.success ? formatIssues(checked.error) : undefined;
  } catch {
    return undefined;
  }
}

function parseDurationMs(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(value);
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const amount = match ? Number(match[1]) * (units[match[2] ?? ''] ?? Number.NaN) : Number.NaN;
  return amount >= 1 ? Math.round(amount) : undefined;
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

/** Validates every record of the source as `ingest` would, storing nothing. */
export async function previewIngest(
  deps: IngestDeps,
  input: IngestSource,
  request: IngestRequest,
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
    const prepared = await prepare(deps, input, shape, record, seen, true);
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
    const prepared = await prepare(deps, input, batch, record, new Map());
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

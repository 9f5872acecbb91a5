/**
 * What one record of a batch's source becomes, the same for an ingest and its preview: a manifest
 * line validated (zod, with its line number) or a folder's document, turned into an item whose key
 * is batch + id + content hash, or into a problem that names the line and the field at fault.
 *
 * A document a record names is read into the workflow's input by a `DocumentInputReader`
 * (document-input.ts) that the caller passes, so this module loads no document extractor: the
 * dashboard's check of an uploaded manifest previews lines without one.
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
import { type Job, jobPriorities } from '../engine/job-record';
import { tenantUpstreamKey } from '../engine/upstream-identity';
import { stepContext, type Workflow } from '../engine/workflow';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import { FileRefused } from '../files/bounded-read';
import { didYouMean } from '../openplatform/closest-name';
import { requestSchemas } from '../openplatform/schemas/requests';
import { batchNameSchema, contentHashOf, itemKeyOf, sha256 } from './batch';
import type { DisclosureMetadata } from './disclosure-form';
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
export type Prepared =
  | { kind: 'item'; item: Omit<BatchItem, 'seq' | 'batchId' | 'createdAt'>; record: SourceRecord }
  | { kind: 'problem'; problem: Omit<BatchProblem, 'batchId' | 'run'> }
  | { kind: 'blank' };

/** What a document became: the workflow's input (before its schema), or why it cannot be used. */
export type DocumentInput =
  | { candidate: unknown; metadata?: DisclosureMetadata | undefined; label?: string | undefined }
  | { problem: string };

/** Reads the document `file` of the record `id` (its `bytes`) into `workflow`'s input. */
export type DocumentInputReader = (document: {
  workflow: Workflow;
  id: string;
  file: string;
  bytes: Uint8Array;
  /** The line's own input fields, which win over the document's. */
  fields: Record<string, unknown>;
  disclosureForm: DisclosureFormConfig | undefined;
}) => Promise<DocumentInput>;

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

export function recordsOf(input: IngestSource, batch: Batch): AsyncIterable<SourceRecord> {
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
export async function idsOfRun(input: IngestSource, batch: Batch): Promise<Map<string, string>> {
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

/**
 * The item (or the problem) `record` is in `batch`. `seen` holds the ids read so far in this run (a
 * second line of an id is a problem). `documents` reads a document a record names; without it such
 * a record is a problem. A dry run stores nothing: an input too large to keep inline is not offloaded.
 */
export async function prepareRecord(
  deps: IngestDeps,
  input: IngestSource,
  batch: Batch,
  record: SourceRecord,
  seen: Map<string, string>,
  options: { documents?: DocumentInputReader | undefined; dryRun?: boolean | undefined } = {},
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
  if (!workflow) {
    return problem(
      `unknown workflow "${workflowName}"${didYouMean(workflowName, [...deps.engine.workflows.keys()])}; known: ${[...deps.engine.workflows.keys()].sort().join(', ')}`,
      id,
    );
  }

  let candidate: unknown = fields;
  let metadata: DisclosureMetadata | undefined;
  let label: string | undefined;
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
    if (!options.documents) return problem(`file: ${file}: documents are not read here`, id);
    const read = await options.documents({
      workflow,
      id,
      file,
      bytes,
      fields,
      disclosureForm: deps.disclosureForm,
    });
    if ('problem' in read) return problem(read.problem, id);
    candidate = read.candidate;
    metadata = read.metadata;
    label = read.label;
  }
  const parsed = workflow.input.safeParse(candidate);
  if (!parsed.success) return problem(`refused by ${workflow.name}: ${formatIssues(parsed.error)}`, id);
  const limits = platformLimitProblem(workflow, parsed.data, deps.engine.clock.now());
  if (limits) return problem(`over the platform's limits: ${limits}`, id);

  const runOptions = { selection: select, ...(deadlineMs === undefined ? {} : { deadlineMs }) };
  // The upstream is part of what is run: an item done on the sandbox is not done on the platform.
  const upstream = await tenantUpstreamKey(deps.engine, batch.tenant);
  const contentHash = contentHashOf(
    workflow.name,
    parsed.data,
    upstream === undefined || upstream === 'sandbox' ? runOptions : { ...runOptions, upstream },
  );
  const key = itemKeyOf(batch.id, id, contentHash);
  label ??= labelOf(parsed.data, id);
  // The priority is not part of what is run (nor of the item's key): how soon, not what.
  const kept = {
    input: parsed.data,
    ...runOptions,
    ...(priority === undefined || priority === 'normal' ? {} : { priority }),
    ...(metadata ? { metadata } : {}),
  };
  const serialized = JSON.stringify(kept);
  let stored: BatchItem['input'];
  if (Buffer.byteLength(serialized) > inlineInputLimitBytes && options.dryRun) stored = { ref: '(dry run)' };
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

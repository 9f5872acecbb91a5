/**
 * Batch identity and item keys. A batch is named (--batch) or named after its manifest; its id is
 * that name made safe plus, for a derived name, a hash of the manifest's identity (its path or S3
 * key), so ingesting the same manifest again lands in the same batch. An item's key is the batch, the
 * disclosure's id and a hash of its content: the same line again is the same item for good, a
 * changed one is a new item.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import * as z from 'zod';
import type { Batch, BatchOptions, BatchSource, FailureBudget } from '../engine/batch-store';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export const batchNameSchema = z
  .string()
  .trim()
  .min(1, 'the batch name is empty')
  .max(64, 'the batch name is longer than 64 characters')
  .regex(/^[A-Za-z0-9][\w.-]*$/, 'a batch name is letters, digits, dot, dash and underscore (not first)');

/** The batch id: the given name, or the manifest's name plus a hash of its identity. */
export function batchIdFor(source: BatchSource, tenant: string, name?: string): string {
  if (name !== undefined) return batchNameSchema.parse(name);
  const stem =
    basename(source.uri.replace(/\/+$/, ''))
      .replace(/\.(jsonl|ndjson|csv|tsv)$/i, '')
      .replace(/[^\w.-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 40) || 'batch';
  return `${stem}-${sha256(`${tenant}\n${source.uri}`).slice(0, 8)}`;
}

/** Canonical JSON: keys sorted, so the same content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The first 12 hex digits of the SHA-256 of what the job would run. */
export function contentHashOf(workflow: string, input: unknown, options: Record<string, unknown>): string {
  return sha256(canonicalJson({ workflow, input, options })).slice(0, 12);
}

/** `ingest:<batchId>:<id hash>:<content hash>`: the item's key, and its job's idempotency key. */
export function itemKeyOf(batchId: string, id: string, contentHash: string): string {
  return `ingest:${batchId}:${sha256(id).slice(0, 16)}:${contentHash}`;
}

/** `5%`, `2.5%` (of the lines read) or `50` (failures). */
export function parseFailureBudget(value: string): FailureBudget {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(value);
  if (!match)
    throw new RangeError(
      `--failure-budget must be a percentage such as 5% or a count such as 50, not "${value}"`,
    );
  const amount = Number(match[1]);
  if (match[2] === '%') {
    if (amount > 100) throw new RangeError('--failure-budget: a percentage is at most 100%');
    return { kind: 'percent', value: amount };
  }
  if (!Number.isInteger(amount)) throw new RangeError('--failure-budget: a count is a whole number');
  return { kind: 'count', value: amount };
}

export function describeBudget(budget: FailureBudget): string {
  return budget.kind === 'percent' ? `${budget.value}%` : `${budget.value} failures`;
}

/** Items of one batch released to run at once, by default. */
export const defaultInFlightPerBatch = 32;

/** A new batch record (status INGESTING, run 1). */
export function newBatch(fields: {
  id: string;
  name: string;
  tenant: string;
  workflow: string;
  source: BatchSource;
  options: BatchOptions;
  now: number;
}): Batch {
  return {
    id: fields.id,
    name: fields.name,
    tenant: fields.tenant,
    workflow: fields.workflow,
    source: fields.source,
    status: 'INGESTING',
    version: 1,
    run: 1,
    cursor: { records: 0, bytes: 0, done: false },
    counts: { records: 0, created: 0, existing: 0, invalid: 0 },
    items: 0,
    admitted: 0,
    inFlight: [],
    settled: { succeeded: 0, failed: 0, cancelled: 0, calls: 0, billedUnits: 0 },
    options: fields.options,
    createdAt: fields.now,
    updatedAt: fields.now,
    runStartedAt: fields.now,
    settledAtRunStart: 0,
  };
}

/** The failures that count against the budget: bad lines and failed items. */
export function failuresOf(batch: Batch): number {
  return batch.counts.invalid + batch.settled.failed;
}

/**
 * Whether the batch's failures pass its budget. A percentage is of the records read so far, and is
 * judged only once 20 records have been read (or the source is done), so one bad first line does
 * not stop a batch.
 */
export function budgetExceeded(batch: Batch): boolean {
  const budget = batch.options.failureBudget;
  if (!budget) return false;
  const failures = failuresOf(batch);
  if (budget.kind === 'count') return failures > budget.value;
  const seen = Math.max(batch.counts.records, batch.admitted + batch.counts.invalid);
  if (seen < 20 && !batch.cursor.done) return false;
  return seen > 0 && (failures / seen) * 100 > budget.value;
}

/**
 * What an object under the report bucket's `inbox/` means (pure; the aws runtime does the I/O):
 *
 * - `inbox/<workflow>/<batch>/<name>.jsonl|.csv` (or `inbox/<workflow>/<name>.jsonl`): a manifest;
 *   `file` paths in it are relative to its folder. Its batch is the `<batch>` folder (or named after
 *   the manifest), unless the object's metadata says otherwise (`opflow-batch`).
 * - `inbox/<workflow>/<batch>/<path>` of any other kind: one document of batch `<batch>`, its id the
 *   `<path>`; except under a `files/` folder, or with metadata `opflow-role: manifest-file`: those
 *   are there for a manifest to name.
 * - Object metadata `opflow-tenant`, `opflow-options` (JSON: selection, deadlineMs, failureBudget,
 *   maxUnits, inFlight) carry what `opflow ingest` was given.
 */
import * as z from 'zod';
import type { BatchOptions, BatchSourceKind } from '../engine/batch-store';
import { defaultInFlightPerBatch } from './batch';

export type InboxEntry =
  | {
      kind: 'manifest';
      workflow: string;
      sourceKind: BatchSourceKind;
      batchName?: string | undefined;
      key: string;
    }
  | { kind: 'document'; workflow: string; batchName: string; folder: string; documentId: string; key: string }
  | { kind: 'ignored'; key: string; reason: string };

export const inboxPrefix = 'inbox/';

export function classifyInboxKey(key: string, metadata: Record<string, string> = {}): InboxEntry {
  if (!key.startsWith(inboxPrefix)) return { kind: 'ignored', key, reason: 'not under inbox/' };
  const parts = key.slice(inboxPrefix.length).split('/');
  if (parts.length < 2 || parts.some((part) => part === '' || part === '.' || part === '..'))
    return {
      kind: 'ignored',
      key,
      reason: 'expected inbox/<workflow>/<batch>/<file> or inbox/<workflow>/<manifest>',
    };
  const [workflow, ...rest] = parts as [string, ...string[]];
  const name = rest[rest.length - 1] as string;
  const extension = /\.[^.]+$/.exec(name)?.[0]?.toLowerCase() ?? '';
  const sourceKind: BatchSourceKind | undefined =
    extension === '.jsonl' || extension === '.ndjson'
      ? 'jsonl'
      : extension === '.csv' || extension === '.tsv'
        ? 'csv'
        : undefined;
  const batchName = metadata['opflow-batch'] ?? (rest.length >= 2 ? rest[0] : undefined);
  if (sourceKind) return { kind: 'manifest', workflow, sourceKind, batchName, key };
  if (rest.length < 2)
    return {
      kind: 'ignored',
      key,
      reason: 'a document goes in a batch folder: inbox/<workflow>/<batch>/<file>',
    };
  if (metadata['opflow-role'] === 'manifest-file' || rest.slice(1, -1).includes('files'))
    return { kind: 'ignored', key, reason: 'a file for a manifest to name' };
  return {
    kind: 'document',
    workflow,
    batchName: metadata['opflow-batch'] ?? (rest[0] as string),
    folder: `${inboxPrefix}${workflow}/${rest[0]}/`,
    documentId: rest.slice(1).join('/'),
    key,
  };
}

const optionsSchema = z
  .object({
    selection: z.enum(['auto', 'manual']).default('auto'),
    deadlineMs: z.number().int().positive().optional(),
    failureBudget: z
      .object({ kind: z.enum(['percent', 'count']), value: z.number().nonnegative() })
      .optional(),
    maxUnits: z.number().positive().optional(),
    inFlight: z.number().int().min(1).max(1000).default(defaultInFlightPerBatch),
  })
  .strict();

/** The batch options and tenant an upload's metadata carries (defaults when it carries none). */
export function inboxOptions(metadata: Record<string, string>): { tenant: string; options: BatchOptions } {
  const tenant = metadata['opflow-tenant'] ?? 'default';
  let raw: unknown = {};
  try {
    raw = metadata['opflow-options'] ? JSON.parse(metadata['opflow-options']) : {};
  } catch {
    throw new Error('opflow-options metadata is not JSON');
  }
  const parsed = optionsSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `opflow-options metadata: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return { tenant, options: parsed.data };
}

/** What `opflow ingest` puts on an upload so the function ingests it as asked. */
export function inboxMetadataFor(
  tenant: string,
  batchName: string,
  options: BatchOptions,
): Record<string, string> {
  return { 'opflow-tenant': tenant, 'opflow-batch': batchName, 'opflow-options': JSON.stringify(options) };
}

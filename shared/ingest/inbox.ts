/**
 * What an object under the report bucket's `inbox/` means (pure; the aws runtime does the I/O):
 *
 * - `inbox/<workflow>/<batch>/<name>.jsonl|.csv` (or `inbox/<workflow>/<name>.jsonl`): a manifest;
 *   `file` paths in it are relative to its folder. Its batch is the `<batch>` folder (or named after
 *   the manifest), unless the object's metadata says otherwise (`opflow-batch`).
 * - `inbox/<workflow>/<batch>/<path>` of any other kind: one document of batch `<batch>`, its id the
 *   `<path>`; except under a `files/` folder, or with metadata `opflow-role: manifest-file`: those
 *   are there for a manifest to name.
 * - The tenant is where the object was written, never what the uploader says: `inbox/tenants/<tenant>/`
 *   followed by the layout above is that tenant's; the layout directly under `inbox/` is the
 *   `default` tenant's. IAM grants an uploader one tenant's prefix (docs/operations.md); the metadata
 *   `opflow-tenant`, when present, must name the same tenant or the upload is left alone.
 * - Object metadata `opflow-options` (JSON: selection, deadlineMs, failureBudget, maxUnits,
 *   inFlight, priority) carries what `opflow ingest` was given.
 */
import * as z from 'zod';
import type { BatchOptions, BatchSourceKind } from '../engine/batch-store';
import { tenantNameSchema } from '../engine/job-commands';
import { jobPrioritySchema } from '../engine/job-record';
import { formatIssues } from '../errors/zod-issues';
import { defaultInFlightPerBatch } from './batch';

export type InboxEntry =
  | {
      kind: 'manifest';
      tenant: string;
      workflow: string;
      sourceKind: BatchSourceKind;
      batchName?: string | undefined;
      key: string;
    }
  | {
      kind: 'document';
      tenant: string;
      workflow: string;
      batchName: string;
      folder: string;
      documentId: string;
      key: string;
    }
  | { kind: 'ignored'; key: string; reason: string };

export const inboxPrefix = 'inbox/';
/** Under `inbox/`, the folder of the tenants' own prefixes (`inbox/tenants/<tenant>/...`). */
const tenantsFolder = 'tenants/';

/** Where `opflow ingest` uploads a tenant's batch: the prefix IAM lets that tenant's uploaders write. */
/** A manifest's kind by its name's extension (.jsonl, .ndjson; .csv, .tsv), else undefined. */
export function manifestKindOf(name: string): BatchSourceKind | undefined {
  const extension = /\.[^./]+$/.exec(name)?.[0]?.toLowerCase() ?? '';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  if (extension === '.csv' || extension === '.tsv') return 'csv';
  return undefined;
}

export function inboxFolderOf(tenant: string, workflow: string, batch: string): string {
  return `${inboxPrefix}${tenant === 'default' ? '' : `${tenantsFolder}${tenant}/`}${workflow}/${batch}/`;
}

export function classifyInboxKey(key: string, metadata: Record<string, string> = {}): InboxEntry {
  if (!key.startsWith(inboxPrefix)) return { kind: 'ignored', key, reason: 'not under inbox/' };
  let base = inboxPrefix;
  let tenant = 'default';
  if (key.startsWith(`${inboxPrefix}${tenantsFolder}`)) {
    const name = key.slice(base.length + tenantsFolder.length).split('/')[0] ?? '';
    const valid = tenantNameSchema.safeParse(name);
    if (!valid.success)
      return {
        kind: 'ignored',
        key,
        reason: `inbox/tenants/<tenant>/: "${name}" is not a tenant name (${valid.error.issues[0]?.message})`,
      };
    tenant = name;
    base = `${inboxPrefix}${tenantsFolder}${name}/`;
  }
  const claimed = metadata['opflow-tenant'];
  if (claimed !== undefined && claimed !== tenant)
    return {
      kind: 'ignored',
      key,
      reason: `opflow-tenant metadata "${claimed}" is not the tenant of the prefix written to (${tenant}): the tenant comes from the prefix; upload under ${inboxPrefix}${tenantsFolder}${claimed}/`,
    };
  const parts = key.slice(base.length).split('/');
  if (parts.length < 2 || parts.some((part) => part === '' || part === '.' || part === '..'))
    return {
      kind: 'ignored',
      key,
      reason: 'expected inbox/<workflow>/<batch>/<file> or inbox/<workflow>/<manifest>',
    };
  const [workflow, ...rest] = parts as [string, ...string[]];
  const name = rest[rest.length - 1] as string;
  const sourceKind = manifestKindOf(name);
  const batchName = metadata['opflow-batch'] ?? (rest.length >= 2 ? rest[0] : undefined);
  if (sourceKind) return { kind: 'manifest', tenant, workflow, sourceKind, batchName, key };
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
    tenant,
    workflow,
    batchName: metadata['opflow-batch'] ?? (rest[0] as string),
    folder: `${base}${workflow}/${rest[0]}/`,
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
    priority: jobPrioritySchema.optional(),
  })
  .strict();

/**
 * The tenant of an upload (its prefix's, from `classifyInboxKey`) and the batch options its metadata
 * carries (defaults when it carries none).
 */
export function inboxOptions(
  metadata: Record<string, string>,
  entry: { tenant: string },
): { tenant: string; options: BatchOptions } {
  const tenant = entry.tenant;
  let raw: unknown = {};
  try {
    raw = metadata['opflow-options'] ? JSON.parse(metadata['opflow-options']) : {};
  } catch {
    throw new Error('opflow-options metadata is not JSON');
  }
  const parsed = optionsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`opflow-options metadata: ${formatIssues(parsed.error)}`);
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

/**
 * The full catalogue: every operation the platform publishes (356 in version 1.0.0 of its OpenAPI
 * file), generated into ./generated/operations.ts by scripts/generate-catalogue.ts. This module looks
 * operations up by id or short id and searches them; their zod schemas are in operation-schemas.ts
 * (loaded on demand, so importing this stays cheap). The 39 operations of opflow's workflows are also
 * in catalogue.ts with typed ids and hand-written schemas.
 */
import { editDistance } from './edit-distance';
import { packedOperations } from './generated/operations';
import type { OperationRow } from './operation-types';
import { unpack } from './unpack';

export type { OperationRow } from './operation-types';

/** What the generator noted about the description's defects (see docs/operations.md). */
export interface GenerationNotes {
  missingSchemasReplaced: string[];
  knownDefectsNotSeen: string[];
  eventStreamRequests: string[];
  undeclaredPathParameters: string[];
}

interface Index {
  rows: readonly OperationRow[];
  notes: GenerationNotes;
  byId: Map<string, OperationRow>;
  byShortId: Map<string, OperationRow[]>;
}

let index: Index | undefined;

/** Decoded on first use (a few milliseconds), so commands that never look an operation up pay nothing. */
function catalogueIndex(): Index {
  if (index) return index;
  const { rows, notes } = unpack<{ rows: OperationRow[]; notes: GenerationNotes }>(packedOperations);
  const byShortId = new Map<string, OperationRow[]>();
  for (const row of rows) {
    if (!row.shortId) continue;
    byShortId.set(row.shortId, [...(byShortId.get(row.shortId) ?? []), row]);
  }
  index = { rows, notes, byId: new Map(rows.map((row) => [row.operationId.toLowerCase(), row])), byShortId };
  return index;
}

/** Every published operation, in the order of the OpenAPI file. */
export function allOperations(): readonly OperationRow[] {
  return catalogueIndex().rows;
}

/** How the generator handled the description's defects. */
export function generationNotes(): GenerationNotes {
  return catalogueIndex().notes;
}

export type OperationLookup =
  | { ok: true; operation: OperationRow }
  | { ok: false; message: string; candidates: string[] };

/**
 * One operation by its operationId or its documented short id (`ai35-1`, `P002`), case-insensitively.
 * A short id that several operations share, or a name that is none, is an error naming candidates.
 */
export function lookupOperation(name: string): OperationLookup {
  const wanted = name.trim().toLowerCase();
  const { byId, byShortId } = catalogueIndex();
  const exact = byId.get(wanted);
  if (exact) return { ok: true, operation: exact };
  const shared = byShortId.get(wanted) ?? [];
  if (shared.length === 1) return { ok: true, operation: shared[0] as OperationRow };
  if (shared.length > 1) {
    const candidates = shared.map((row) => row.operationId);
    return {
      ok: false,
      message: `"${name}" names ${shared.length} operations: ${shared
        .map((row) => `${row.operationId} (${row.summary})`)
        .join(', ')}; give the operationId`,
      candidates,
    };
  }
  const candidates = closeOperationNames(wanted);
  return {
    ok: false,
    message: `unknown operation "${name.slice(0, 100)}"${
      candidates.length ? `; did you mean ${candidates.join(', ')}?` : ''
    } (opflow operations lists them)`,
    candidates,
  };
}

/** The operation of `name`, or undefined (see {@link lookupOperation} for why not). */
export function findCatalogueOperation(name: string): OperationRow | undefined {
  const found = lookupOperation(name);
  return found.ok ? found.operation : undefined;
}

/** The groups (OpenAPI tags, which are also permission groups), with their operation counts. */
export function operationGroups(): { group: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const row of allOperations()) counts.set(row.group, (counts.get(row.group) ?? 0) + 1);
  return [...counts].map(([group, count]) => ({ group, count }));
}

/** The group named `name` (case and surrounding spaces ignored; a unique prefix is enough). */
export function findGroup(name: string): string | undefined {
  const wanted = name.trim().toLowerCase();
  const groups = operationGroups().map(({ group }) => group);
  const exact = groups.find((group) => group.trim().toLowerCase() === wanted);
  if (exact) return exact;
  const prefixed = groups.filter((group) => group.trim().toLowerCase().startsWith(wanted));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * Operations matching every word (in the id, short id, summary, path, group or a parameter or field
 * name), optionally within one group.
 */
export function searchOperations(options: { group?: string | undefined; words?: string[] }): OperationRow[] {
  const words = (options.words ?? []).map((word) => word.toLowerCase()).filter((word) => word !== '');
  return allOperations().filter((row) => {
    if (options.group !== undefined && row.group !== options.group) return false;
    if (words.length === 0) return true;
    const text = [
      row.operationId,
      row.shortId ?? '',
      row.summary,
      row.path,
      row.group,
      ...row.parameters.map((parameter) => parameter.name),
      ...row.bodyFields,
    ]
      .join(' ')
      .toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

/** Ids and short ids close to `wanted` (a prefix, or a small edit distance), best first. */
function closeOperationNames(wanted: string, limit = 5): string[] {
  const names = new Set<string>();
  for (const row of allOperations()) {
    names.add(row.operationId);
    if (row.shortId) names.add(row.shortId);
  }
  return [...names]
    .map((candidate) => {
      const lower = candidate.toLowerCase();
      const prefix = wanted.length >= 3 && lower.startsWith(wanted) ? 0 : Number.POSITIVE_INFINITY;
      return { candidate, score: Math.min(prefix, editDistance(wanted, lower)) };
    })
    .filter(({ candidate, score }) => score <= Math.max(2, Math.floor(candidate.length / 5)))
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}

/** The path with its `{name}` parts filled in (URL-encoded). Throws when one is missing. */
export function fillPath(row: OperationRow, values: Record<string, unknown>): string {
  return row.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined || value === null || String(value) === '') {
      throw new Error(`${row.operationId}: path parameter ${name} is missing`);
    }
    return encodeURIComponent(String(value));
  });
}

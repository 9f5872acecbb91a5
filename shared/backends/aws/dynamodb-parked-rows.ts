/**
 * A key's parked jobs read from the `due` index's `WAIT#<bucket>` partition (the DynamoDB job
 * store's `listParked`, loaded on first use: only the step worker's release rounds and the
 * sweeper read them). A class's rows are sorted by tenant, then due time (`parkedSortKey`): each
 * tenant's soonest are one Query, from after the last tenant read (`parkedTenantRange`), so a
 * round reaches every tenant with parked jobs whatever their counts.
 */
import type { ParkedJob } from '../../engine/admission/parked-jobs';

type Item = Record<string, unknown>;

/** A class of a key's parked jobs is read for at most this many tenants a round (with `perTenant`). */
export const parkedTenantsRead = 16;

/**
 * The sort keys of a class's parked rows from the tenant `after` on (exclusive; all tenants'
 * without it), for a BETWEEN: an escaped name holds no `#` or `$`, so `<name>$` comes after every
 * row of that tenant and before the next tenant's.
 */
export function parkedTenantRange(parkedClass: string, after?: string | undefined): [string, string] {
  return [
    `${parkedClass}#t:${after === undefined ? '' : `${encodeURIComponent(after)}$`}`,
    `${parkedClass}#t;`,
  ];
}

/** The sort keys of a class's rows in the old format (`<class>#<due>#<id>`) due by `until`, for a BETWEEN. */
export function parkedOldKeyRange(parkedClass: string, until: number): [string, string] {
  return [`${parkedClass}#`, `${parkedClass}#${String(until + 1).padStart(13, '0')}`];
}

/** A parked row's sort key read back: its tenant (undefined in the old format), due time and job id. */
export function parsedParkedKey(
  sortKey: string,
): { class: string; tenant: string | undefined; dueAt: number; id: string } | undefined {
  const parts = sortKey.split('#');
  if (parts.length === 4 && parts[1]?.startsWith('t:')) {
    const [parkedClass, tenant, due, id] = parts as [string, string, string, string];
    return { class: parkedClass, tenant: decodeURIComponent(tenant.slice(2)), dueAt: Number(due), id };
  }
  if (parts.length === 3) {
    const [parkedClass, due, id] = parts as [string, string, string];
    return { class: parkedClass, tenant: undefined, dueAt: Number(due), id };
  }
  return undefined;
}

/**
 * One Query of the key's `WAIT#` partition of the `due` index: its rows whose sort key is within
 * `range`, at most `count`, from after `start` (a page's LastEvaluatedKey). The store builds it,
 * so that this chunk holds no SDK or table code of its own (its bundle would split them out).
 */
export type ParkedRowsQuery = (
  range: [string, string],
  count: number,
  start?: Item | undefined,
) => Promise<{ Items?: Item[] | undefined; LastEvaluatedKey?: Item | undefined }>;

/** `DynamoDbJobStore.listParked` (`ParkedJobs.listParked`), over the classes `classes` in order. */
export async function listParkedRows(
  query: ParkedRowsQuery,
  classes: readonly string[],
  until: number,
  limit: number,
  options: { perTenant?: number | undefined; oldKeys?: boolean | undefined } = {},
): Promise<ParkedJob[]> {
  const found: ParkedJob[] = [];
  const perTenant = Math.max(1, options.perTenant ?? limit);
  for (const parkedClass of classes) {
    if (found.length >= limit) break;
    const ofClass: (ParkedJob & { dueAt: number })[] = [];
    if (options.oldKeys) {
      const answer = await query(parkedOldKeyRange(parkedClass, until), limit - found.length);
      // Old rows first in the class's count (they sort before every tenant's).
      for (const item of answer.Items ?? []) {
        const row = parsedParkedKey(String(item.GSI2SK));
        if (row) ofClass.push({ id: row.id, class: parkedClass, dueAt: row.dueAt });
      }
    }
    // Tenant by tenant: `after` the last tenant done, `start` the page of `current`'s to go on from.
    let after: string | undefined;
    let start: Item | undefined;
    let current: string | undefined;
    let taken = 0;
    // With `perTenant` a class is read whole, up to `parkedTenantsRead` tenants' rows.
    const room = options.perTenant
      ? Math.max(limit - found.length, perTenant * parkedTenantsRead)
      : limit - found.length;
    while (ofClass.length < room) {
      const answer = await query(
        parkedTenantRange(parkedClass, after),
        Math.min(perTenant - taken, room - ofClass.length),
        start,
      );
      const items = answer.Items ?? [];
      for (const item of items) {
        const row = parsedParkedKey(String(item.GSI2SK));
        if (row?.tenant === undefined) continue;
        if (row.tenant !== current) {
          current = row.tenant;
          taken = 0;
        }
        // A tenant's rows are in due order: past `until`, none of the rest is due either.
        if (taken >= perTenant || row.dueAt > until) {
          taken = perTenant;
          continue;
        }
        ofClass.push({ id: row.id, class: parkedClass, tenant: row.tenant, dueAt: row.dueAt });
        taken++;
      }
      if (!answer.LastEvaluatedKey || items.length === 0) break;
      if (taken >= perTenant) {
        after = current;
        start = undefined;
        current = undefined;
        taken = 0;
      } else start = answer.LastEvaluatedKey;
    }
    ofClass.sort((a, b) => a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    found.push(...ofClass.slice(0, room));
  }
  return found;
}

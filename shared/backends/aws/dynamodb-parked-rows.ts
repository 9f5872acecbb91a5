/**
 * A key's parked jobs read from the `due` index's `WAIT#<bucket>` partition (the DynamoDB job
 * store's `listParked`, loaded on first use: only the step worker's release rounds and the
 * sweeper read them). A class's rows are sorted by tenant, then due time (`parkedSortKey`): each
 * tenant's soonest are one Query, from after the last tenant read (`parkedTenantRange`), so a
 * round reaches every tenant with parked jobs whatever their counts.
 */
import type { ListParkedOptions, ParkedJob } from '../../engine/admission/parked-jobs';

type Item = Record<string, unknown>;

/**
 * A class of a key's parked jobs is read with at most this many Queries a round (with `perTenant`:
 * about one a tenant), 0.5 read unit each; a key with more tenants parked is read from a point
 * the round draws (`startAt`), so that every tenant is reached over rounds.
 */
export const parkedQueriesPerClass = 16;

/** What a tenant's name may start with (`[\w.-]`): a round's scan starts at one of them. */
const nameStarts = '-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

/**
 * The sort keys of a class's parked rows from the tenant `after` on (exclusive; from the escaped
 * name prefix `from` without it) up to the prefix `to` (the class's end without it), for a
 * BETWEEN: an escaped name holds no `#` or `$`, so `<name>$` comes after every row of that tenant
 * and before the next tenant's.
 */
export function parkedTenantRange(
  parkedClass: string,
  after?: string | undefined,
  from = '',
  to?: string | undefined,
): [string, string] {
  return [
    `${parkedClass}#t:${after === undefined ? from : `${encodeURIComponent(after)}$`}`,
    to === undefined ? `${parkedClass}#t;` : `${parkedClass}#t:${to}`,
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
  options: ListParkedOptions = {},
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
    // With `perTenant` a class is read whole, up to `parkedQueriesPerClass` Queries, from the name
    // start `startAt` draws to the class's end and then from its start up to there.
    const room = options.perTenant
      ? Math.max(limit - found.length, perTenant * parkedQueriesPerClass)
      : limit - found.length;
    const split =
      options.perTenant && options.startAt !== undefined
        ? nameStarts[Math.floor(Math.min(Math.max(options.startAt, 0), 0.999999) * nameStarts.length)]
        : undefined;
    const passes: [string, string | undefined][] =
      split === undefined
        ? [['', undefined]]
        : [
            [split, undefined],
            ['', split],
          ];
    let queries = 0;
    for (const [from, to] of passes) {
      // Tenant by tenant: `after` the last tenant done, `start` the page of `current`'s to go on from.
      let after: string | undefined;
      let start: Item | undefined;
      let current: string | undefined;
      let taken = 0;
      while (ofClass.length < room && !(options.perTenant && queries >= parkedQueriesPerClass)) {
        queries++;
        const answer = await query(
          parkedTenantRange(parkedClass, after, from, to),
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
    }
    ofClass.sort((a, b) => a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    found.push(...ofClass.slice(0, room));
  }
  return found;
}

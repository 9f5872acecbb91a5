/**
 * The address of each page, in the hash: `#/` (jobs, filters in the query), `#/jobs/<id>`,
 * `#/batches[/<id>]`, `#/schedules`, `#/webhooks`, `#/bulk` (its filter in the query). A list's address holds its page's cursor and the
 * cursors before it, so Previous goes back one page.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Route } from './types';

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const at = raw.indexOf('?');
  const path = at < 0 ? raw : raw.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : raw.slice(at + 1));
  const report = /^\/jobs\/([^/]+)\/report$/.exec(path);
  if (report) return { page: 'report', id: decodeURIComponent(report[1]!), query };
  if (path === '/overview') return { page: 'overview', query };
  if (path === '/new') return { page: 'new', query };
  if (path === '/upload') return { page: 'upload', query };
  if (path === '/bulk') return { page: 'bulk', query };
  const job = /^\/jobs\/([^/]+)$/.exec(path);
  if (job) return { page: 'job', id: decodeURIComponent(job[1]!), query };
  const batch = /^\/batches\/([^/]+)$/.exec(path);
  if (batch) return { page: 'batch', id: decodeURIComponent(batch[1]!), query };
  if (path === '/batches') return { page: 'batches', query };
  if (path === '/schedules') return { page: 'schedules', query };
  if (path === '/webhooks') return { page: 'webhooks', query };
  return { page: 'jobs', query };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export type Filters = Record<string, string | undefined>;

/** The query of a list request or address: the filters that are set, and the page's cursor. */
export function filterQuery(filters: Filters, cursor?: string): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  if (cursor) query.set('cursor', cursor);
  return query;
}

/**
 * The hash of a page of a list (`/` the jobs, `/webhooks` the deliveries): the filters, the page's
 * cursor, and the cursors of the pages before it (`prev`, oldest first; empty for the first page).
 */
export function pageHash(path: string, filters: Filters, cursor: string, trail: string[]): string {
  const query = filterQuery(filters, cursor);
  for (const earlier of trail) query.append('prev', earlier);
  const text = query.toString();
  return text ? `#${path}?${text}` : `#${path}`;
}

export function jobsHash(filters: Filters): string {
  return pageHash('/', filters, '', []);
}

export const jobHref = (id: string) => `#/jobs/${encodeURIComponent(id)}`;
export const batchHref = (id: string) => `#/batches/${encodeURIComponent(id)}`;

/** The bulk actions page with the filters of the jobs list it was opened from. */
export function bulkHash(filters: Filters): string {
  const { status, workflow, batchId, tenant, since, until } = filters;
  return pageHash('/bulk', { status, workflow, batchId, tenant, since, until }, '', []);
}

/**
 * Filters of `GET /jobs` that the job stores do not index (workflow, source, creation dates, and
 * a search of the title, label and input text): pages of the store's own listing (status, batch and
 * tenant still narrow it there) are read and filtered here, so both backends answer them the same.
 * The cursor says where in which store page to go on, so a page holds exactly `limit` matches;
 * one request reads at most `maxScanned` jobs and then answers what it found with a cursor.
 */
import * as z from 'zod';
import { type Job, jobSources } from '../engine/job-record';
import type { JobPage, JobStore, ListJobsQuery } from '../engine/ports';

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
const moment = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be a date (2026-01-31) or an ISO 8601 time');

/** The filters (query parameters) this module answers. */
export const searchFilterShape = {
  workflow: z.string().min(1).max(100).optional(),
  source: z.enum(jobSources).optional(),
  /** Created at or after (a date means its start, UTC). */
  since: moment.optional(),
  /** Created at or before (a date means its end, UTC). */
  until: moment.optional(),
  /** Words that must all appear in the label, title, id or input text (case-insensitive). */
  q: z.string().trim().min(1).max(200).optional(),
};
export type SearchFilters = {
  [K in keyof typeof searchFilterShape]?: z.output<(typeof searchFilterShape)[K]>;
};

const pageSize = 200;

/** Fields of a workflow input that hold its text, in the order a title is looked for. */
const textFields = ['title', 'text', 'question', 'query', 'message', 'content', 'prompt'];

/**
 * A short human title for a job: its input's title, else the first line of its text (a Markdown
 * heading's words), else its label; undefined when the input is not kept inline.
 */
export function jobTitle(job: Job): string | undefined {
  const input = 'inline' in job.input ? job.input.inline : undefined;
  if (input !== null && typeof input === 'object') {
    for (const field of textFields) {
      const value = (input as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue;
      const line = value
        .split('\n')
        .map((part) => part.replace(/^\s*#+\s*/, '').trim())
        .find((part) => part !== '');
      if (line) return line.length > 100 ? `${line.slice(0, 99)}…` : line;
    }
  }
  return job.label;
}
export const maxScanned = 5_000;

export function hasSearchFilters(filters: SearchFilters): boolean {
  return Object.keys(searchFilterShape).some((name) => filters[name as keyof SearchFilters] !== undefined);
}

/** A predicate for the filters. */
export function matcher(filters: SearchFilters): (job: Job) => boolean {
  const since = filters.since === undefined ? undefined : Date.parse(filters.since);
  let until = filters.until === undefined ? undefined : Date.parse(filters.until);
  if (until !== undefined && datePattern.test(filters.until!)) until += 24 * 3600_000 - 1;
  const words = (filters.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return (job) => {
    if (filters.workflow !== undefined && job.workflow !== filters.workflow) return false;
    if (filters.source !== undefined && job.source !== filters.source) return false;
    if (since !== undefined && job.createdAt < since) return false;
    if (until !== undefined && job.createdAt > until) return false;
    if (words.length > 0) {
      // Inputs over the inline limit live in the report store: their label and id are searched.
      const input = 'inline' in job.input ? JSON.stringify(job.input.inline) : '';
      const text = `${job.id} ${job.label ?? ''} ${input}`.toLowerCase();
      if (!words.every((word) => text.includes(word))) return false;
    }
    return true;
  };
}

interface ScanCursor {
  /** The store's cursor of the page to read (absent: the first page). */
  c?: string | undefined;
  /** How many jobs of that page were already looked at. */
  s: number;
}
const cursorPrefix = 's.';

function encodeCursor(cursor: ScanCursor): string {
  return cursorPrefix + Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): ScanCursor {
  const bad = () => new RangeError('search: the cursor is not one this API handed out');
  if (!text.startsWith(cursorPrefix)) throw bad();
  try {
    const value = JSON.parse(Buffer.from(text.slice(cursorPrefix.length), 'base64url').toString('utf8'));
    return z.strictObject({ c: z.string().optional(), s: z.number().int().min(0) }).parse(value);
  } catch {
    throw bad();
  }
}

/** One page of jobs matching `filters` among the store's listing for `base`. */
export async function searchJobs(
  store: JobStore,
  base: Omit<ListJobsQuery, 'limit' | 'cursor'>,
  filters: SearchFilters,
  limit: number,
  cursorText?: string | undefined,
): Promise<JobPage> {
  const matches = matcher(filters);
  let position: ScanCursor = cursorText === undefined ? { s: 0 } : decodeCursor(cursorText);
  const found: Job[] = [];
  let scanned = 0;
  for (;;) {
    const page = await store.list({ ...base, limit: pageSize, cursor: position.c });
    for (let index = position.s; index < page.jobs.length; index++) {
      const job = page.jobs[index]!;
      scanned += 1;
      if (matches(job)) found.push(job);
      const more = index + 1 < page.jobs.length || page.cursor !== undefined;
      if ((found.length >= limit || scanned >= maxScanned) && more) {
        return { jobs: found, cursor: encodeCursor({ c: position.c, s: index + 1 }) };
      }
    }
    if (page.cursor === undefined) return { jobs: found };
    position = { c: page.cursor, s: 0 };
  }
}

/**
 * Reading many jobs from any JobStore: every page of a query, and every job not finished yet.
 */
import type { Job, JobStatus } from '../engine/job-record';
import type { JobStore, ListJobsQuery } from '../engine/ports';

/** Statuses of jobs that still have work to do or wait for a person. */
export const unfinishedStatuses: readonly JobStatus[] = ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT'];

/** Every job matching `query`, following the cursor. */
export async function listAll(store: JobStore, query: ListJobsQuery): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...query, limit: 1000, cursor });
    jobs.push(...page.jobs);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return jobs;
}

/** Every job not finished yet (waiting for a selection included), oldest first. */
export async function listUnfinished(store: JobStore): Promise<Job[]> {
  const jobs: Job[] = [];
  for (const status of unfinishedStatuses) jobs.push(...(await listAll(store, { status })));
  return jobs.sort((a, b) => a.id.localeCompare(b.id));
}

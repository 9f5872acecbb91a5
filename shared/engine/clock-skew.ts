/**
 * Clock skew between the processes that share the jobs: a record or a queue message stamped by a
 * writer whose clock is ahead of the reader's would otherwise hold its job for as long as the skew.
 * Clocks kept by NTP differ by milliseconds; a stamp further ahead than `maxClockAheadMs` was
 * written by a clock ahead of the reader's, and the reader re-bases what it meant on its own clock.
 */
import type { Job } from './job-record';

/** A stamp further ahead of the reader's clock than this was written by a clock ahead of it. */
export const maxClockAheadMs = 5_000;

/** How far ahead of `now` the clock that last wrote the job looked (its `updatedAt`), or 0 within the tolerance. */
export function writerAheadMs(job: Pick<Job, 'updatedAt'>, now: number): number {
  const ahead = job.updatedAt - now;
  return ahead > maxClockAheadMs ? ahead : 0;
}

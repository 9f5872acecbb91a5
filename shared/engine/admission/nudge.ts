/**
 * The sweeper's nudge (aws): parked jobs are released by the step workers after each step of their
 * key (release.ts). A key whose line of tokens has ended has no step coming to do it; the sweeper
 * nudges its parked jobs instead, once a minute.
 */
import type { EngineDeps } from '../deps';
import { unparkedJob } from '../job-record';
import type { ParkedJobs } from './parked-jobs';

/**
 * For each key whose line of tokens ended more than `graceMs` ago (default 5 s), every parked job
 * due within what the queue can delay (`lookaheadMs`, default the queue's maximum: 15 minutes on
 * SQS, more than the 10 minutes ahead a call is ever parked) is unparked by a commit at the version
 * read and sent its message for its due time, at the new version; it then takes its token when it
 * comes, as any job. A releaser working on the job meanwhile and the sweeper never both go on: one
 * conditional commit wins, and the loser sends nothing, so no message goes stale.
 */
export async function nudgeParked(
  deps: Pick<EngineDeps, 'store' | 'queue' | 'clock'>,
  parked: ParkedJobs,
  options: { graceMs?: number; lookaheadMs?: number; limit?: number } = {},
): Promise<number> {
  const now = deps.clock.now();
  let nudged = 0;
  for (const bucket of await parked.parkedBuckets()) {
    const lineEnd = await parked.lineEndsAt(bucket, now);
    if (lineEnd !== undefined && lineEnd > now - (options.graceMs ?? 5_000)) continue;
    const found = await parked.listParked(
      bucket,
      now + (options.lookaheadMs ?? deps.queue.maxDelayMs),
      options.limit ?? 100,
      { oldKeys: true },
    );
    for (const { id } of found) {
      const job = await deps.store.get(id);
      if (!job?.parked) continue;
      const next = unparkedJob(job, now);
      if (!(await deps.store.commit(next, job.version))) continue; // a releaser won
      const message = { jobId: job.id, version: next.version };
      await deps.queue.send(message, Math.min(Math.max(0, job.nextRunAt - now), deps.queue.maxDelayMs));
      nudged++;
    }
  }
  return nudged;
}

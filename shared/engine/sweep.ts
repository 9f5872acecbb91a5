/**
 * The sweeper: the store is the source of truth and the queue only says "look at this job now".
 * A message lost between commit and send (a crash), or a wait longer than the queue can hold,
 * leaves a job whose nextRunAt has passed; the sweeper sends it again. Duplicates are harmless:
 * the runner drops every message whose version is not the job's.
 *
 * Clock skew: a job last written by a clock ahead of the sweeper's has its due time in that clock's
 * time, so `listDue` would pass it by for as long as the skew; the store's `listWrittenAhead` finds
 * such jobs and the sweeper sends those `sentWhenWrittenAhead` keeps (the runner re-bases their
 * times on its own clock). The rule is here, for every store; a store only finds the candidates.
 */
import type { ParkedJobs } from './admission/parked-jobs';
import { writerAheadMs } from './clock-skew';
import type { EngineDeps, SweepDeps } from './deps';
import { isTerminal, type Job, unparkedJob } from './job-record';

/**
 * Which jobs last written by a clock ahead of `now`'s the sweeper sends, on every backend: each one
 * unfinished, a paid call marked in flight included (its claim moved the version past any message
 * that named it, and the runner counts the allowance it has left on this clock: a frozen caller is
 * taken over after it, a live one keeps its call by its heartbeat), but not a job waiting for a
 * person (an answer re-times it).
 */
export function sentWhenWrittenAhead(job: Job, now: number): boolean {
  return !isTerminal(job.status) && job.status !== 'AWAITING_INPUT' && writerAheadMs(job, now) > 0;
}

export interface SweepOptions {
  /** Only jobs overdue by at least this long are re-sent (default 30 s), to leave in-flight messages alone. */
  graceMs?: number;
  /** At most this many jobs per sweep (default 500). */
  limit?: number;
  /**
   * Which overdue jobs to re-send. Default: the store's `listDue`. The local runtime passes the
   * jobs no queued message will bring back (its queue is in the same database).
   */
  listDue?: ((now: number, limit: number) => Promise<Job[]>) | undefined;
}

export async function sweep(
  deps: SweepDeps,
  options: SweepOptions = {},
): Promise<{ requeued: number; expired: number; writtenAhead: number }> {
  const now = deps.clock.now();
  const limit = options.limit ?? 500;
  const listDue = options.listDue ?? ((at: number, max: number) => deps.store.listDue(at, max));
  const due = await listDue(now - (options.graceMs ?? 30_000), limit);
  const dueIds = new Set(due.map((job) => job.id));
  const ahead = ((await deps.store.listWrittenAhead?.(now, limit)) ?? []).filter(
    (job) => !dueIds.has(job.id) && sentWhenWrittenAhead(job, now),
  );
  const messages = [...due, ...ahead].map((job) => ({
    message: { jobId: job.id, version: job.version },
    delayMs: 0,
  }));
  if (deps.queue.sendBatch) await deps.queue.sendBatch(messages);
  else for (const { message } of messages) await deps.queue.send(message, 0);
  // Jobs past their deadline are failed by the runner when these messages arrive.
  const expired = due.filter((job) => job.deadlineAt <= now).length;
  if (due.length > 0) deps.log?.info('sweeper re-sent overdue jobs', { requeued: due.length, expired });
  if (ahead.length > 0) {
    deps.log?.warn('sweeper sent jobs written by a clock ahead of this one', {
      jobs: ahead.length,
      aheadMs: Math.max(...ahead.map((job) => job.updatedAt - now)),
    });
  }
  return { requeued: due.length + ahead.length, expired, writtenAhead: ahead.length };
}

/**
 * Parked jobs (aws) past their deadline, whatever their key's line: each is unparked in a commit at
 * the version read and sent its message now, and the runner fails it at its deadline. The nudge
 * passes by the parked jobs of a key whose line goes on, and a release round may not reach a job at
 * the back of a long line before its deadline. At most `limit` jobs due by now per key are read.
 */
export async function expireParked(
  deps: Pick<EngineDeps, 'store' | 'queue' | 'clock' | 'log'>,
  parked: ParkedJobs,
  options: { limit?: number } = {},
): Promise<number> {
  const now = deps.clock.now();
  let expired = 0;
  for (const bucket of await parked.parkedBuckets()) {
    const ids = (await parked.listParked(bucket, now, options.limit ?? 100, { oldKeys: true })).map(
      (found) => found.id,
    );
    if (ids.length === 0) continue;
    const jobs = deps.store.getMany
      ? await deps.store.getMany(ids)
      : (await Promise.all(ids.map((id) => deps.store.get(id)))).filter((job) => job !== undefined);
    for (const job of jobs) {
      if (!job.parked || job.deadlineAt > now) continue;
      const next = unparkedJob(job, now);
      if (!(await deps.store.commit(next, job.version))) continue; // a releaser won
      await deps.queue.send({ jobId: job.id, version: next.version }, 0);
      expired++;
    }
  }
  if (expired > 0) deps.log?.info('sweeper sent parked jobs past their deadline', { expired });
  return expired;
}

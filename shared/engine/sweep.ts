/**
 * The sweeper: the store is the source of truth and the queue only says "look at this job now".
 * A message lost between commit and send (a crash), or a wait longer than the queue can hold,
 * leaves a job whose nextRunAt has passed; the sweeper sends it again. Duplicates are harmless:
 * the runner drops every message whose version is not the job's.
 */
import type { EngineDeps } from './deps';
import type { Job } from './job-record';

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
  deps: EngineDeps,
  options: SweepOptions = {},
): Promise<{ requeued: number; expired: number }> {
  const now = deps.clock.now();
  const listDue = options.listDue ?? ((at: number, limit: number) => deps.store.listDue(at, limit));
  const due = await listDue(now - (options.graceMs ?? 30_000), options.limit ?? 500);
  const messages = due.map((job) => ({ message: { jobId: job.id, version: job.version }, delayMs: 0 }));
  if (deps.queue.sendBatch) await deps.queue.sendBatch(messages);
  else for (const { message } of messages) await deps.queue.send(message, 0);
  // Jobs past their deadline are failed by the runner when these messages arrive.
  const expired = due.filter((job) => job.deadlineAt <= now).length;
  if (due.length > 0) deps.log?.info('sweeper re-sent overdue jobs', { requeued: due.length, expired });
  return { requeued: due.length, expired };
}

/**
 * The sweeper: the store is the source of truth and the queue only says "look at this job now".
 * A message lost between commit and send (a crash), or a wait longer than the queue can hold,
 * leaves a job whose nextRunAt has passed; the sweeper sends it again, at a version one on (a commit
 * that counts the message against the job's budget, so a job that never finishes a step is not
 * re-sent for ever: past its budget the sweeper fails it). A job another writer moved meanwhile is
 * alive and left alone; a late original message is stale and dropped by the runner.
 */
import type { EngineDeps } from './deps';
import { defaultMessageBudget, isTerminal, type Job, resentJob } from './job-record';

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

/** Re-send commits made at once (each is one conditional write). */
const commitsAtOnce = 16;

export async function sweep(
  deps: EngineDeps,
  options: SweepOptions = {},
): Promise<{ requeued: number; expired: number; overBudget: number }> {
  const now = deps.clock.now();
  const listDue = options.listDue ?? ((at: number, limit: number) => deps.store.listDue(at, limit));
  const due = await listDue(now - (options.graceMs ?? 30_000), options.limit ?? 500);
  const budget = deps.messageBudget ?? defaultMessageBudget;
  const resent: Job[] = [];
  const stopped: Job[] = [];
  for (let start = 0; start < due.length; start += commitsAtOnce) {
    await Promise.all(
      due.slice(start, start + commitsAtOnce).map(async (job) => {
        // Not due yet (a look ahead at a paid call's allowance): its caller may be alive, so its
        // record is left as it is and the message goes at its version (the runner defers it while
        // the call lives); a commit would make the call's outcome lose to this one.
        if (job.nextRunAt > now) return void resent.push(job);
        const next = resentJob(job, budget, now);
        if (!(await deps.store.commit(next, job.version))) return; // moved meanwhile: alive
        (isTerminal(next.status) ? stopped : resent).push(next);
      }),
    );
  }
  const messages = resent.map((job) => ({ message: { jobId: job.id, version: job.version }, delayMs: 0 }));
  if (deps.queue.sendBatch) await deps.queue.sendBatch(messages);
  else for (const { message } of messages) await deps.queue.send(message, 0);
  for (const job of stopped) {
    deps.onJobChange?.(job);
    deps.metrics?.count('JobFailed', 1, { workflow: job.workflow });
    deps.metrics?.count('MessageBudgetExceeded', 1, { workflow: job.workflow });
    deps.log?.error('job failed: it used up its message budget', {
      jobId: job.id,
      workflow: job.workflow,
      step: job.step,
      messages: job.messages,
      error: job.lastError,
    });
  }
  // Jobs past their deadline are failed by the runner when these messages arrive.
  const expired = resent.filter((job) => job.deadlineAt <= now).length;
  if (due.length > 0)
    deps.log?.info('sweeper re-sent overdue jobs', {
      requeued: resent.length,
      expired,
      overBudget: stopped.length,
    });
  return { requeued: resent.length, expired, overBudget: stopped.length };
}

/**
 * What a job change means for its callback, for the senders: a job that ends brings its outbox
 * entry forward (due now). Kept apart from the sender so that functions which only commit jobs (the
 * step worker, the api) do not load the HTTP sender.
 */
import type { CallbackOutbox, CallbackOutboxEntry } from '../engine/callback-ports';
import { isTerminal, type Job } from '../engine/job-record';
import type { Clock } from '../engine/ports';
import { errorMessage } from '../errors/error-message';
import type { Logger } from '../log/logger';

/** When a sender looks again at a job that has not ended (its end brings the entry forward sooner). */
export const defaultRecheckMs = 15 * 60_000;

/** Whether a job's change makes its callback due now: it ended and no attempt of this round is scheduled. */
export function callbackDueOnEnd(job: Job): boolean {
  if (!job.callbackUrl || !isTerminal(job.status)) return false;
  return !job.callback || (job.callback.state === 'pending' && job.callback.nextAttemptAt === undefined);
}

export interface CallbackNotifier {
  /** A job changed (the engine's `onJobChange`). */
  noticed(job: Job): void;
  /** Waits for the writes and messages started by `noticed` (before a Lambda invocation ends). */
  flush(): Promise<void>;
}

/**
 * Tells a sender that runs elsewhere (aws: the callback queue) about job changes. A job that ends
 * with a callback brings its entry forward and wakes the sender now; a job just created with one
 * wakes it at the recheck time, so that if the end's message is ever lost the sender still comes
 * (and keeps coming every recheck while the job runs). Failures are logged, never thrown: the job
 * is committed, and the recheck covers a lost message.
 */
export function createCallbackNotifier(options: {
  outbox: CallbackOutbox;
  wake: (entry: CallbackOutboxEntry) => Promise<void>;
  clock: Clock;
  recheckMs?: number | undefined;
  log?: Logger | undefined;
}): CallbackNotifier {
  const pending = new Set<Promise<void>>();
  const track = (jobId: string, work: Promise<void>) => {
    const tracked: Promise<void> = work
      .catch((error: unknown) =>
        options.log?.error('callback: the sender was not told of a job change; its recheck will find it', {
          jobId,
          error: errorMessage(error),
        }),
      )
      .finally(() => pending.delete(tracked));
    pending.add(tracked);
  };
  return {
    noticed(job) {
      const now = options.clock.now();
      if (callbackDueOnEnd(job)) {
        track(
          job.id,
          options.outbox.add(job.id, now).then(() => options.wake({ jobId: job.id, dueAt: now })),
        );
      } else if (job.callbackUrl && job.version === 1 && !isTerminal(job.status)) {
        track(job.id, options.wake({ jobId: job.id, dueAt: now + (options.recheckMs ?? defaultRecheckMs) }));
      }
    },
    async flush() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}

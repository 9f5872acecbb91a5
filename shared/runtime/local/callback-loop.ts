/**
 * Runs the callback sender in a long-lived process (`opflow serve`, `opflow run` while it waits):
 * a pass every second, and one at once when a job with a callback ends. Everything it needs to
 * continue is in the outbox, so stopping it at any moment loses nothing.
 */
import { type CallbackSenderDeps, runCallbackSender } from '../../callbacks/sender';
import { isTerminal, type Job } from '../../engine/job-record';

export interface CallbackLoop {
  /** A job changed: run a pass soon if it ended with a callback. */
  noticed(job: Job): void;
  /** Stops and waits for the pass in progress. */
  stop(): Promise<void>;
}

export function startCallbackLoop(deps: CallbackSenderDeps, intervalMs = 1_000): CallbackLoop {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const pass = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = runCallbackSender(deps)
      .then(() => undefined)
      .catch((error) =>
        deps.log?.error('callback sender pass failed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          pass();
        }
      });
  };
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  pass();
  return {
    noticed(job) {
      // A job just ended: bring its entry forward (it may be waiting out a recheck) and send now.
      const fresh =
        !job.callback || (job.callback.state === 'pending' && job.callback.nextAttemptAt === undefined);
      if (!job.callbackUrl || !isTerminal(job.status) || !fresh || stopped) return;
      deps.outbox
        .add(job.id, deps.clock.now())
        .then(pass)
        .catch(() => undefined);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Runs the callback sender in a long-lived process (`opflow serve`, `opflow run` while it waits).
 * It does not poll: it runs a pass when it starts, when a job with a callback ends in this process,
 * and when the outbox's earliest entry comes due (one timer, set to that time); with nothing in the
 * outbox it sleeps until woken. Passes overlap within the sender's bounds (8 deliveries at once, 2
 * per receiver host), so a slow receiver does not hold a callback that comes due meanwhile.
 * `stop()` ends the attempts in flight at once; their entries stay due, so nothing is lost.
 */
import { callbackDueOnEnd } from '../../callbacks/notifier';
import {
  type CallbackSenderDeps,
  DeliverySlots,
  type ReportLinks,
  runCallbackSender,
  servedReportLinks,
} from '../../callbacks/sender';
import type { Job } from '../../engine/job-record';
import { errorMessage } from '../../errors/error-message';

export interface CallbackLoop {
  /** A job changed: run a pass now if it ended with a callback. */
  noticed(job: Job): void;
  /** A callback was queued (a resend): run a pass now. */
  wake(): void;
  /** Ends the attempts in flight and waits for the passes to finish their records. */
  stop(): Promise<void>;
}

export const publicUrlVariable = 'OPFLOW_PUBLIC_URL';

/**
 * The report links of local callbacks: with OPFLOW_PUBLIC_URL (the address receivers reach
 * `opflow serve` at), links to its `GET /jobs/{id}/report/{file}`; without, none (a path on this
 * machine is of no use to a receiver). Throws naming the variable when it is not an http(s) URL.
 */
export function localReportLinks(env: Readonly<Record<string, string | undefined>>): ReportLinks | undefined {
  const raw = env[publicUrlVariable]?.trim();
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) {
    throw new Error(
      `${publicUrlVariable}: must be an http(s) URL without credentials, query or fragment, e.g. https://opflow.example.com`,
    );
  }
  return servedReportLinks(url.href);
}

/** The longest one timer waits (setTimeout's limit is about 24.8 days). */
const maxTimerMs = 2 ** 31 - 1;
/** When the earliest entry is already due but taken (in flight elsewhere), look again after this. */
const retakeMs = 1_000;

export function startCallbackLoop(deps: CallbackSenderDeps): CallbackLoop {
  const shutdown = new AbortController();
  const slots = deps.slots ?? new DeliverySlots();
  const passes = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  let stopped = false;

  const wakeAt = (at: number) => {
    if (stopped || at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        pass();
      },
      Math.min(maxTimerMs, Math.max(0, at - deps.clock.now())),
    );
    timer.unref();
  };

  const senderDeps: CallbackSenderDeps = {
    ...deps,
    slots,
    wake: async (entry) => {
      await deps.wake?.(entry);
      wakeAt(entry.dueAt);
    },
  };

  /** Sleep until the earliest entry: now-ish if one is due but another pass holds it. */
  const sleep = async () => {
    const earliest = await deps.outbox.earliest();
    if (!earliest) return;
    const now = deps.clock.now();
    wakeAt(earliest.dueAt > now ? earliest.dueAt : now + retakeMs);
  };

  const pass = () => {
    if (stopped) return;
    const running: Promise<void> = runCallbackSender(senderDeps, {
      limit: slots.concurrency * 4,
      signal: shutdown.signal,
    })
      .then(sleep)
      .catch((error: unknown) => {
        deps.log?.error('callback sender pass failed', {
          error: errorMessage(error),
        });
        wakeAt(deps.clock.now() + 5_000);
      })
      .finally(() => passes.delete(running));
    passes.add(running);
  };

  pass();
  return {
    noticed(job) {
      // A job just ended: bring its entry forward (it may be waiting out a recheck) and send now.
      if (!callbackDueOnEnd(job) || stopped) return;
      deps.outbox
        .add(job.id, deps.clock.now())
        .then(pass)
        .catch(() => undefined);
    },
    wake: pass,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      shutdown.abort();
      while (passes.size > 0) await Promise.allSettled([...passes]);
    },
  };
}

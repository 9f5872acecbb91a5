/**
 * How a job's record changes while it waits for its key's token: the admission events of
 * advance() (advance.ts calls this; it stays pure). A wait never runs past the job's deadline: a
 * job whose token comes later is looked at when its time is up, and the runner fails it then.
 */
import type { Advanced, EngineEvent } from '../advance';
import { type Job, unparkedJob } from '../job-record';

/** The admission events of advance(). */
export type WaitEvent = Extract<
  EngineEvent,
  { type: 'no-token' | 'token-reserved' | 'park' | 'admitted' | 'unpark' }
>;

/** A reserved token this close ahead is due (acquire-token.ts's `earlyToleranceMs`). */
const dueTokenToleranceMs = 1_000;

/** advance() for a wait: the record and when to look at the job again, no later than its deadline. */
export function advanceWait(job: Job, event: WaitEvent, now: number): Advanced {
  return withinDeadline(waitUncapped(job, event, now), now);
}

/**
 * Never look again later than the deadline: a token due after it is of no use to the job. The
 * record's `nextRunAt` moves no later than the deadline too, so the sweeper and the runner's guard
 * both see the job as due then.
 */
export function withinDeadline(advanced: Advanced, now: number): Advanced {
  const { job, delayMs } = advanced;
  if (delayMs === undefined || now + delayMs <= job.deadlineAt) return advanced;
  const capped = Math.max(0, job.deadlineAt - now);
  if (advanced.unchanged) return { ...advanced, delayMs: capped };
  return { ...advanced, job: { ...job, nextRunAt: Math.min(job.nextRunAt, now + capped) }, delayMs: capped };
}

function waitUncapped(job: Job, event: WaitEvent, now: number): Advanced {
  switch (event.type) {
    case 'no-token': {
      if (event.reserved) {
        return {
          job: {
            ...job,
            version: job.version + 1,
            updatedAt: now,
            nextRunAt: event.retryAt,
            tokenAt: event.retryAt,
            parked: undefined,
          },
          delayMs: Math.max(0, event.retryAt - now),
          completed: false,
        };
      }
      // A token due by now that still finds no call is gone: a priority call took it over
      // (priority-lane.ts). The record drops it, so the job never comes back to spend it.
      if (job.tokenAt !== undefined && job.tokenAt <= now + dueTokenToleranceMs) {
        const dropped = { ...job, version: job.version + 1, updatedAt: now, nextRunAt: event.retryAt };
        return {
          job: { ...dropped, tokenAt: undefined },
          delayMs: Math.max(0, event.retryAt - now),
          completed: false,
        };
      }
      if (now - job.nextRunAt <= event.refreshAfterMs) {
        return { job, unchanged: true, delayMs: Math.max(0, event.retryAt - now), completed: false };
      }
      const moved = { ...job, version: job.version + 1, updatedAt: now, nextRunAt: event.retryAt };
      return { job: moved, delayMs: Math.max(0, event.retryAt - now), completed: false };
    }
    case 'token-reserved': {
      const at = Math.max(event.at, job.nextRunAt);
      return {
        job: { ...job, updatedAt: now, nextRunAt: at, tokenAt: at },
        delayMs: Math.max(0, at - now),
        completed: false,
      };
    }
    case 'park': {
      const parked = { bucket: event.bucket, withinMs: Math.max(0, Math.round(event.withinMs)) };
      return {
        job: {
          ...job,
          ...(event.pending ? {} : { version: job.version + 1, updatedAt: now }),
          tokenAt: undefined,
          parked,
        },
        completed: false,
      };
    }
    case 'admitted': {
      const at = Math.max(event.at, now);
      return {
        job: {
          ...job,
          version: job.version + 1,
          updatedAt: now,
          nextRunAt: at,
          tokenAt: at,
          parked: undefined,
        },
        delayMs: at - now,
        completed: false,
      };
    }
    case 'unpark':
      return { job: unparkedJob(job, now), delayMs: Math.max(0, job.nextRunAt - now), completed: false };
  }
}

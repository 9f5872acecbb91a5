/**
 * A new job's first message, sent when the key's limiter gives its first call a token. Sent at once
 * and without a token, the message of a job submitted into a backlog found the key's line taken and
 * waited with a second message: one message a job more than alone. Where the queue carries tokens
 * (SQS), the submitter asks admission (`acquireToken`) as the step worker would, so the message
 * comes once, holding its token. Without a way to reach the key's bucket, or when anything here
 * fails, the message goes at once, as before: the job is never lost (the sweeper finds a job whose
 * message was not sent), and a token booked for it and not spent is budget, never a call paid twice.
 */
import { errorMessage } from '../errors/error-message';
import { type AdmissionDeps, acquireToken } from './admission/acquire-token';
import type { JobDeps } from './deps';
import type { Job } from './job-record';
import type { RateLimiter, WorkMessage } from './ports';
import type { Step, Workflow } from './workflow';

/** Which rate bucket (key fingerprint) a tenant's API key draws from; undefined when not known. */
export interface KeyBuckets {
  bucketOf(tenant: string): Promise<string | undefined>;
}

/**
 * What the submitter needs to take a new job's first token: the key's limiter, where the tenant's
 * bucket is found, and admission's tuning as the step workers have it.
 */
export interface FirstTokens {
  rateLimiter: RateLimiter;
  buckets: KeyBuckets;
  /** As the step workers' `reserveHorizonMs` (default 15 s). */
  reserveHorizonMs?: number | undefined;
  /** As the step workers' `admission`. */
  admission?: boolean | undefined;
  /**
   * As the step workers' `random` (a bench's or a test's seeded source, so a run can be replayed):
   * the spread of a job sent back to wait. Default `Math.random`.
   */
  random?: (() => number) | undefined;
}

/** Sends a new job's first message (`JobDeps.sendFirstMessage`). */
export type FirstMessageSender = (deps: JobDeps, workflow: Workflow, step: Step, job: Job) => Promise<void>;

/**
 * A sender of new jobs' first messages that hold their first call's token where it can be taken
 * (see the module's comment), else send at once.
 */
export function firstMessageSender(tokens: FirstTokens): FirstMessageSender {
  return (deps, workflow, step, job) => sendFirstMessage(deps, tokens, workflow, step, job);
}

async function sendFirstMessage(
  deps: JobDeps,
  tokens: FirstTokens,
  workflow: Workflow,
  step: Step,
  job: Job,
): Promise<void> {
  const message: WorkMessage = { jobId: job.id, version: job.version };
  if (deps.queue.carriesTokens && step.kind !== 'fetch') {
    try {
      const bucket = await tokens.buckets.bucketOf(job.tenant);
      if (bucket !== undefined) {
        const admission: AdmissionDeps = {
          ...deps,
          rateLimiter: tokens.rateLimiter,
          reserveHorizonMs: tokens.reserveHorizonMs,
          admission: tokens.admission,
          random: tokens.random ?? Math.random,
        };
        const now = deps.clock.now();
        const outcome = await acquireToken(admission, { workflow, job, step, message, bucket, now });
        // A token taken now: the message holds it. Any other outcome sent (or parked) the job itself.
        if (outcome.type === 'granted') {
          await deps.queue.send({ ...message, tokenAt: now }, 0);
          return;
        }
        if (outcome.type !== 'conflict') return;
      }
    } catch (error) {
      deps.log?.warn("could not take a new job's first token; its message goes without one", {
        jobId: job.id,
        error: errorMessage(error),
      });
    }
  }
  await deps.queue.send(message, 0);
}

/**
 * Retry and polling policies, as data declared beside each workflow step, and the pure functions
 * that turn them into delays. Randomness is injected so tests are exact. A step's retry policy
 * defaults from the catalogue: by the effect of the operation it calls (see `retryDefaultsFor`).
 */
import type { OperationEffect } from '../openplatform/catalogue';

/** How a failed attempt of a step is retried. Defaults: 6 attempts, 1 s base, 2 min cap. */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** How an upstream task is polled until it is done. */
export interface PollPolicy {
  /** Delay before the first poll, aimed near the usual completion time. */
  firstDelayMs: number;
  /** Each following delay is the previous one times `factor`, up to `maxDelayMs`. */
  factor: number;
  maxDelayMs: number;
  /** Give up (the job fails with kind `poll-timeout`) when polling has lasted this long. */
  giveUpAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 120_000,
};

/**
 * The policy of a call that creates or changes something upstream: it may bill, so it is retried
 * fewer times than a read. (Only failures that are safe to repeat are retried at all: a network
 * failure after a create may have reached the upstream is final, whatever the policy.)
 */
export const createRetryPolicy: RetryPolicy = { ...defaultRetryPolicy, maxAttempts: 4 };

/** The retry policy a step gets unless it declares its own: by its operation's effect. */
export function retryDefaultsFor(effect: OperationEffect): RetryPolicy {
  return effect === 'read' ? defaultRetryPolicy : createRetryPolicy;
}

export const defaultPollPolicy: PollPolicy = {
  firstDelayMs: 5_000,
  factor: 1.5,
  maxDelayMs: 60_000,
  giveUpAfterMs: 60 * 60_000,
};

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(max, base·2^(attempt-1))],
 * never shorter than what the upstream asked for with Retry-After.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** The delay before poll number `poll` (1 = the first poll after the task was started). */
export function pollDelay(policy: PollPolicy, poll: number): number {
  return Math.round(
    Math.min(policy.maxDelayMs, policy.firstDelayMs * policy.factor ** Math.max(0, poll - 1)),
  );
}

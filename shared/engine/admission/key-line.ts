/**
 * A key's bucket as a limiter keeps it: the token bucket (rate-bucket.ts) and when a take was last
 * refused behind a long line (`saturated`). Pure and time-injected, so the in-memory limiter and the
 * SQLite one shared by every process on a database apply the same changes; only where it is kept
 * differs. The tokens reserved ahead and the priority calls' cut-ins are the lane's (priority-lane.ts),
 * kept beside it.
 */
import type { RateDecision } from '../ports';
import {
  bucketBudget,
  initialBucket,
  lineIsLong,
  type RateBucketConfig,
  type RateBucketState,
  succeeded,
  take,
  throttled,
} from './rate-bucket';

export interface KeyLine {
  bucket: RateBucketState;
  /** When a take was last refused with its token more than one interval away (`lineIsLong`). */
  refusedAt?: number | undefined;
}

/** A take refused this recently means the key's budget is used up (`RateLimiter.saturated`). */
export const saturationWindowMs = 2_000;

/** A key nobody has called yet: a full bucket at the ceiling. */
export function newKeyLine(config: RateBucketConfig, now: number): KeyLine {
  return { bucket: initialBucket(config, now) };
}

/**
 * `RateLimiter.take`: the decision, and the line after it (undefined when nothing worth keeping
 * changed). A token reserved (`decision.reserved`) goes into the lane too (`noteReserved`).
 */
export function takeToken(
  line: KeyLine,
  config: RateBucketConfig,
  now: number,
  reserveWithinMs?: number,
): { line: KeyLine | undefined; decision: RateDecision } {
  const result = take(line.bucket, config, now, reserveWithinMs);
  const { decision } = result;
  const refused = lineIsLong(decision, result.state.rate, now);
  // A refusal that reserves nothing leaves the bucket as it was (its refill is recomputed on every read).
  if (!decision.granted && !decision.reserved && !refused) return { line: undefined, decision };
  return {
    line: {
      bucket: decision.granted || decision.reserved ? result.state : line.bucket,
      refusedAt: refused ? now : line.refusedAt,
    },
    decision,
  };
}

/**
 * When the line would give a call its token (`RateLimiter.cutIn` compares it with the lane's
 * reserved tokens): undefined when a token is free now.
 */
export function nextTokenAt(line: KeyLine, config: RateBucketConfig, now: number): number | undefined {
  const peek = take(line.bucket, config, now).decision;
  return peek.granted ? undefined : peek.retryAtMs;
}

/** `RateLimiter.saturated`. */
export function lineSaturated(line: KeyLine, now: number): boolean {
  return now - (line.refusedAt ?? Number.NEGATIVE_INFINITY) < saturationWindowMs;
}

/** `RateLimiter.budget`. */
export function lineBudget(
  line: KeyLine,
  config: RateBucketConfig,
  now: number,
): { tokens: number; ratePerSecond: number } {
  return bucketBudget(line.bucket, config, now);
}

/** `RateLimiter.throttled`. */
export function lineThrottled(line: KeyLine, config: RateBucketConfig, now: number): KeyLine {
  return { ...line, bucket: throttled(line.bucket, config, now) };
}

/** `RateLimiter.succeeded`. */
export function lineSucceeded(line: KeyLine, config: RateBucketConfig, now: number): KeyLine {
  return { ...line, bucket: succeeded(line.bucket, config, now) };
}

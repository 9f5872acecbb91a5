/**
 * A key's bucket as a limiter keeps it: the token bucket (rate-bucket.ts) and when a take was last
 * refused behind a long line (`saturated`). Pure and time-injected: the SQLite limiter applies each
 * change in one transaction over the key's row, shared by every process on a database. The tokens
 * reserved ahead and the priority calls' cut-ins are the lane's (priority-lane.ts), kept beside it.
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
  /** The latest time a call goes: a token granted now, or a held token's paced time (`paceSpend`). */
  spentAt?: number | undefined;
  /** Paced times not yet come (`paceSpend`): each is its holder's, spent when it comes. */
  paced?: number[] | undefined;
}

/** A take refused this recently means the key's budget is used up (`RateLimiter.saturated`). */
export const saturationWindowMs = 2_000;

/** A key nobody has called yet: a full bucket at the ceiling. */
export function newKeyLine(config: RateBucketConfig, now: number): KeyLine {
  return { bucket: initialBucket(config, now) };
}

/**
 * `RateLimiter.take`: the decision, and the line after it (undefined when nothing worth keeping
 * changed). A token reserved (`decision.reserved`) goes into the lane too (priority-lane.ts).
 */
export function takeToken(
  line: KeyLine,
  config: RateBucketConfig,
  now: number,
  reserveWithinMs?: number,
): { line: KeyLine | undefined; decision: RateDecision } {
  // No token closer than an interval after a call that went late (`paceSpend`): the line starts there.
  const spentAt = line.spentAt;
  const bucket =
    config.burst <= 1 &&
    spentAt !== undefined &&
    spentAt > (line.bucket.lastTokenAt ?? Number.NEGATIVE_INFINITY)
      ? { ...line.bucket, lastTokenAt: spentAt }
      : line.bucket;
  const result = take(bucket, config, now, reserveWithinMs);
  const { decision } = result;
  const refused = lineIsLong(decision, result.state.rate, now);
  // A refusal that reserves nothing leaves the bucket as it was (its refill is recomputed on every read).
  if (!decision.granted && !decision.reserved && !refused) return { line: undefined, decision };
  return {
    line: {
      ...line,
      bucket: decision.granted || decision.reserved ? result.state : line.bucket,
      refusedAt: refused ? now : line.refusedAt,
      spentAt: decision.granted ? Math.max(now, spentAt ?? now) : spentAt,
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

/** Paced times are forgotten this long after they passed (their holder never came). */
const pacedMemoryMs = 60_000;

/**
 * `RateLimiter.pace`: when a held token (reserved for `at`) goes, claimed at `now`. A process busy
 * for a second claims several held tokens at once, each late by less than the one before; spent
 * together, they and the tokens after them, spent on time, come closer than the key's limit
 * allows in a sliding second. So a call goes one token interval after the latest one at the
 * earliest, and a holder told to wait keeps that time as its own (`paced`).
 */
export function paceSpend(
  line: KeyLine,
  config: RateBucketConfig,
  at: number,
  now: number,
): { line: KeyLine; goesAt: number } {
  const paced = (line.paced ?? []).filter((time) => time > now - pacedMemoryMs);
  if (paced.includes(at)) {
    const rest = paced.filter((time) => time !== at);
    return { line: { ...line, paced: rest.length > 0 ? rest : undefined }, goesAt: now };
  }
  const rate = Math.min(config.ceiling, Math.max(config.floor, line.bucket.rate));
  const after = config.burst <= 1 && line.spentAt !== undefined ? line.spentAt + 1000 / rate : now;
  const goesAt = Math.max(now, Math.ceil(after - 1e-6));
  const kept = goesAt > now ? [...paced, goesAt] : paced;
  return {
    line: {
      ...line,
      spentAt: Math.max(goesAt, line.spentAt ?? goesAt),
      paced: kept.length > 0 ? kept : undefined,
    },
    goesAt,
  };
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

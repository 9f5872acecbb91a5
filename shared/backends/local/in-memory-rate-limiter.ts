/**
 * The local RateLimiter: one adaptive token bucket per API key, kept in memory. Every worker of the
 * process shares it; the arithmetic is shared/engine/admission/rate-bucket.ts, the same as on AWS.
 */

import {
  cutIn,
  emptyLane,
  type LaneState,
  noteReserved,
  stillHeld,
} from '../../engine/admission/priority-lane';
import {
  initialBucket,
  lineIsLong,
  type RateBucketConfig,
  type RateBucketOptions,
  type RateBucketState,
  rateBucketConfig,
  refill,
  succeeded,
  take,
  throttled,
} from '../../engine/admission/rate-bucket';
import type { RateDecision, RateLimiter } from '../../engine/ports';

/** A take refused this recently means the budget is used up. */
export const saturationWindowMs = 2_000;

export class InMemoryRateLimiter implements RateLimiter {
  readonly config: RateBucketConfig;
  readonly #buckets = new Map<string, RateBucketState>();
  readonly #refusedAt = new Map<string, number>();
  /** Tokens reserved ahead and taken over by priority calls, per bucket (admission/priority-lane.ts). */
  readonly #lanes = new Map<string, LaneState>();

  /** `ratePerSecond` is the ceiling for each bucket; see `rateBucketConfig` for the other defaults. */
  constructor(options: RateBucketOptions) {
    this.config = rateBucketConfig(options);
  }

  async take(bucket: string, now: number, options?: { reserveWithinMs?: number }): Promise<RateDecision> {
    const result = take(this.#state(bucket, now), this.config, now, options?.reserveWithinMs);
    this.#buckets.set(bucket, result.state);
    if (lineIsLong(result.decision, result.state.rate, now)) this.#refusedAt.set(bucket, now);
    if (!result.decision.granted && result.decision.reserved)
      this.#lanes.set(
        bucket,
        noteReserved(this.#lanes.get(bucket) ?? emptyLane, result.decision.retryAtMs, now),
      );
    return result.decision;
  }

  async cutIn(bucket: string, now: number, by: string): Promise<number | undefined> {
    // When the line would give the call its token: a token free now is simply taken.
    const peek = take(this.#state(bucket, now), this.config, now).decision;
    if (peek.granted) return undefined;
    const result = cutIn(this.#lanes.get(bucket) ?? emptyLane, now, by, peek.retryAtMs);
    this.#lanes.set(bucket, result.lane);
    return result.at;
  }

  async stillHeld(bucket: string, at: number, by: string): Promise<boolean> {
    return stillHeld(this.#lanes.get(bucket) ?? emptyLane, at, by);
  }

  async saturated(bucket: string, now: number): Promise<boolean> {
    return now - (this.#refusedAt.get(bucket) ?? Number.NEGATIVE_INFINITY) < saturationWindowMs;
  }

  async budget(bucket: string, now: number): Promise<{ tokens: number; ratePerSecond: number }> {
    const state = refill(this.#state(bucket, now), this.config, now);
    return { tokens: state.tokens, ratePerSecond: state.rate };
  }

  async throttled(bucket: string, now: number): Promise<void> {
    this.#buckets.set(bucket, throttled(this.#state(bucket, now), this.config, now));
  }

  async succeeded(bucket: string, now: number): Promise<void> {
    this.#buckets.set(bucket, succeeded(this.#state(bucket, now), this.config, now));
  }

  /** The current refill rate of a bucket, in calls per second (the ceiling for an unused bucket). */
  currentRate(bucket: string): number {
    return this.#buckets.get(bucket)?.rate ?? this.config.ceiling;
  }

  #state(bucket: string, now: number): RateBucketState {
    return this.#buckets.get(bucket) ?? initialBucket(this.config, now);
  }
}

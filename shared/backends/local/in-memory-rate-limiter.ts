/**
 * A RateLimiter kept in memory: one adaptive token bucket per API key, shared by the workers of one
 * process only. The local backend uses the SQLite one (sqlite-rate-limiter.ts), which every process
 * on a database shares; this one serves tests and benches that need no database. The arithmetic is
 * shared/engine/admission/key-line.ts and priority-lane.ts, the same as the SQLite limiter's.
 */

import {
  type KeyLine,
  lineBudget,
  lineSaturated,
  lineSucceeded,
  lineThrottled,
  newKeyLine,
  nextTokenAt,
  takeToken,
} from '../../engine/admission/key-line';
import {
  cutIn,
  emptyLane,
  type LaneState,
  noteReserved,
  stillHeld,
} from '../../engine/admission/priority-lane';
import {
  type RateBucketConfig,
  type RateBucketOptions,
  rateBucketConfig,
} from '../../engine/admission/rate-bucket';
import type { RateDecision, RateLimiter } from '../../engine/ports';

export class InMemoryRateLimiter implements RateLimiter {
  readonly config: RateBucketConfig;
  readonly #lines = new Map<string, KeyLine>();
  /** Tokens reserved ahead and taken over by priority calls, per bucket (admission/priority-lane.ts). */
  readonly #lanes = new Map<string, LaneState>();

  /** `ratePerSecond` is the ceiling for each bucket; see `rateBucketConfig` for the other defaults. */
  constructor(options: RateBucketOptions) {
    this.config = rateBucketConfig(options);
  }

  async take(bucket: string, now: number, options?: { reserveWithinMs?: number }): Promise<RateDecision> {
    const { line, decision } = takeToken(this.#line(bucket, now), this.config, now, options?.reserveWithinMs);
    if (line) this.#lines.set(bucket, line);
    if (!decision.granted && decision.reserved)
      this.#lanes.set(bucket, noteReserved(this.#lanes.get(bucket) ?? emptyLane, decision.retryAtMs, now));
    return decision;
  }

  async cutIn(bucket: string, now: number, by: string): Promise<number | undefined> {
    const freeAt = nextTokenAt(this.#line(bucket, now), this.config, now);
    if (freeAt === undefined) return undefined;
    const result = cutIn(this.#lanes.get(bucket) ?? emptyLane, now, by, freeAt);
    this.#lanes.set(bucket, result.lane);
    return result.at;
  }

  async stillHeld(bucket: string, at: number, by: string): Promise<boolean> {
    return stillHeld(this.#lanes.get(bucket) ?? emptyLane, at, by);
  }

  async saturated(bucket: string, now: number): Promise<boolean> {
    const line = this.#lines.get(bucket);
    return line !== undefined && lineSaturated(line, now);
  }

  async budget(bucket: string, now: number): Promise<{ tokens: number; ratePerSecond: number }> {
    return lineBudget(this.#line(bucket, now), this.config, now);
  }

  async throttled(bucket: string, now: number): Promise<void> {
    this.#lines.set(bucket, lineThrottled(this.#line(bucket, now), this.config, now));
  }

  async succeeded(bucket: string, now: number): Promise<void> {
    this.#lines.set(bucket, lineSucceeded(this.#line(bucket, now), this.config, now));
  }

  /** The current refill rate of a bucket, in calls per second (the ceiling for an unused bucket). */
  currentRate(bucket: string): number {
    return this.#lines.get(bucket)?.bucket.rate ?? this.config.ceiling;
  }

  #line(bucket: string, now: number): KeyLine {
    return this.#lines.get(bucket) ?? newKeyLine(this.config, now);
  }
}

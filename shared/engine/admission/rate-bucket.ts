/**
 * The arithmetic of the adaptive token bucket that limits upstream calls per API key.
 *
 * Pure and time-injected: every function takes the state and `now` and returns a new state, so the
 * SQLite limiter (local) and the DynamoDB-backed limiter (aws) share exactly the same behaviour.
 * The bucket refills at `rate` tokens per second up to `burst`. A throttling answer halves the rate
 * (never below the floor) and remembers the rate it happened at as the key's likely limit; successes
 * then climb back quickly to just under that limit and only probe above it slowly. Without that
 * memory (plain AIMD) the rate saw-tooths between half the limit and over it, and a configured rate
 * far above the key's real limit takes minutes to come down.
 */
import { createHash } from 'node:crypto';
import type { RateDecision } from '../ports';

/** What is kept per bucket. `tokens` may be fractional; `updatedAt` is in epoch milliseconds. */
export interface RateBucketState {
  tokens: number;
  /** Current refill rate, in tokens per second. */
  rate: number;
  updatedAt: number;
  /**
   * When the rate was last halved. Optional: a store that does not keep it only loses the guard
   * against halving several times for one burst of throttled calls that were already in flight.
   */
  decreasedAt?: number | undefined;
  /**
   * The rate the upstream last throttled us at: where the key's real limit probably is. Optional: a
   * store that does not keep it falls back to plain additive increase towards the ceiling.
   */
  knownLimit?: number | undefined;
  /**
   * Successes counted per one-second window (`windowStart`, `windowOk`; `lastWindowOk` is the count
   * of the window before). When the upstream throttles, the successes of the last second are the
   * best measure of the key's real limit. Optional: without them a throttle halves the rate.
   */
  windowStart?: number | undefined;
  windowOk?: number | undefined;
  lastWindowOk?: number | undefined;
  /** Throttled answers in the window and in the window before: they tell whether it was saturated. */
  windowThrottled?: number | undefined;
  lastWindowThrottled?: number | undefined;
  /**
   * When the latest token was granted or is reserved for (a bucket of burst 1 only). Optional: a
   * store that does not keep it loses only the guard against two tokens closer than 1/rate apart.
   */
  lastTokenAt?: number | undefined;
  /**
   * Tokens booked for calls due after the line's end (`reserveAhead`, a burst of 1 only): their
   * times, ascending, each at least 1/rate from the others and from the line. A booked token is
   * taken from `tokens` when the line reaches it (`lastTokenAt` becomes its time); until then no
   * token is handed out within 1/rate of it. Optional: a store that does not keep it never books.
   */
  booked?: number[] | undefined;
}

export interface RateBucketConfig {
  /** The configured limit, in calls per second: the rate never rises above it. */
  ceiling: number;
  /** The rate never falls below this after throttling. */
  floor: number;
  /** The most tokens the bucket holds, i.e. the largest burst of calls at once. */
  burst: number;
  /** Added to the rate after each successful call. */
  increasePerSuccess: number;
  /** Factor applied to the rate when the upstream throttles. */
  decreaseFactor: number;
  /** Throttles within this many milliseconds of the last decrease do not decrease again. */
  decreaseCooldownMs: number;
}

export interface RateBucketOptions {
  /** Calls per second allowed for one API key. */
  ratePerSecond: number;
  /**
   * Default: 1, calls evenly spaced. The platform counts calls per second, and a bucket of B tokens
   * that also refills during that second lets B + rate calls through in it: a burst of a second's
   * worth would let twice the limit through in the first second after any pause.
   */
  burst?: number | undefined;
  /** Default: a twentieth of the rate, and never more than one call every two seconds. */
  floorPerSecond?: number | undefined;
  /** Default: a fiftieth of the rate, so about fifty successes climb back from the floor. */
  increasePerSuccess?: number | undefined;
  /** Default: one second, about the time calls already in flight take to come back. */
  decreaseCooldownMs?: number | undefined;
}

/** Builds a complete bucket configuration from a rate and optional overrides (defaults above). */
export function rateBucketConfig(options: RateBucketOptions): RateBucketConfig {
  const ceiling = options.ratePerSecond;
  if (!(Number.isFinite(ceiling) && ceiling > 0)) {
    throw new RangeError(`ratePerSecond must be a positive number, got ${String(ceiling)}`);
  }
  const burst = options.burst ?? 1;
  const floor = Math.min(ceiling, options.floorPerSecond ?? Math.min(ceiling / 20, 0.5));
  const increasePerSuccess = options.increasePerSuccess ?? ceiling / 50;
  if (!(burst >= 1)) throw new RangeError(`burst must be at least 1, got ${String(burst)}`);
  if (!(floor > 0)) throw new RangeError(`floorPerSecond must be positive, got ${String(floor)}`);
  if (!(increasePerSuccess >= 0)) {
    throw new RangeError(`increasePerSuccess must not be negative, got ${String(increasePerSuccess)}`);
  }
  const decreaseCooldownMs = options.decreaseCooldownMs ?? 1000;
  if (!(decreaseCooldownMs >= 0)) {
    throw new RangeError(`decreaseCooldownMs must not be negative, got ${String(decreaseCooldownMs)}`);
  }
  return { ceiling, floor, burst, increasePerSuccess, decreaseFactor: 0.5, decreaseCooldownMs };
}

/** A new bucket: full, at the ceiling rate. */
export function initialBucket(config: RateBucketConfig, now: number): RateBucketState {
  return { tokens: config.burst, rate: config.ceiling, updatedAt: now };
}

/**
 * Adds the tokens earned since `updatedAt`. A clock that went backwards (another machine's clock)
 * earns nothing and keeps the later `updatedAt`, so tokens are never counted twice.
 */
export function refill(state: RateBucketState, config: RateBucketConfig, now: number): RateBucketState {
  const elapsedMs = Math.max(0, now - state.updatedAt);
  const rate = clamp(state.rate, config.floor, config.ceiling);
  const tokens = Math.min(config.burst, state.tokens + (elapsedMs / 1000) * rate);
  return { ...state, tokens, rate, updatedAt: Math.max(state.updatedAt, now) };
}

/**
 * Takes one token if there is one; otherwise says when the next whole token will be there. With
 * `reserveWithinMs`, a token due within that long is reserved at once (the bucket goes into debt,
 * so the next caller's token is due later): callers then line up in order, each told its own time,
 * instead of all coming back for the same next token.
 */
export function take(
  state: RateBucketState,
  config: RateBucketConfig,
  now: number,
  reserveWithinMs = 0,
): { state: RateBucketState; decision: RateDecision } {
  const filled = absorbBooked(refill(replayPastBookings(state, config, now), config, now), config, now);
  // With a burst of 1 no two tokens are closer than 1/rate: the upstream counts calls in a sliding
  // second, and reserved times rounded up to whole milliseconds could otherwise fall 1 ms closer
  // than that (floating-point noise in the refill): 6 calls in one second, the 6th throttled, and a
  // throttle costs a tenth of the budget for the next ten seconds or so.
  const spacedFrom =
    config.burst <= 1 && filled.lastTokenAt !== undefined
      ? filled.lastTokenAt + 1000 / filled.rate
      : Number.NEGATIVE_INFINITY;
  // (A millionth of a token or millisecond is floating-point noise: a retry time rounded down by
  // it still finds its token.)
  if (filled.tokens >= 1 - 1e-6 && now >= spacedFrom - 1e-6) {
    return {
      state: { ...filled, tokens: filled.tokens - 1, lastTokenAt: now },
      decision: { granted: true },
    };
  }
  const refilledIn = filled.tokens >= 1 - 1e-6 ? 0 : ((1 - filled.tokens) / filled.rate) * 1000;
  const waitMs = Math.max(1, Math.ceil(refilledIn - 1e-6), Math.ceil(spacedFrom - filled.updatedAt - 1e-6));
  const retryAtMs = filled.updatedAt + waitMs;
  if (waitMs <= reserveWithinMs) {
    return {
      state: { ...filled, tokens: filled.tokens - 1, lastTokenAt: retryAtMs },
      decision: { granted: false, retryAtMs, reserved: true },
    };
  }
  return { state: filled, decision: { granted: false, retryAtMs } };
}

/**
 * Reserves the token of a call due at `at` (now or later) while the call is being scheduled, so
 * the call comes once, when its token is due, instead of coming at `at`, finding the line full and
 * being sent back. When the line already reaches `at` (the bucket's next free token is due then
 * or later), that next token is the caller's, as with `take` (the bucket goes into debt). When
 * the line ends earlier, a bucket of burst 1 books the first time from `at` that is at least 1/rate
 * from every token already booked (`booked`), instead of taking a token now: that would leave the
 * free tokens before `at` unused or, spent at `at`, put two calls where the bucket spaced one. Either
 * way only within `withinMs` of `at`; otherwise nothing is reserved and the call takes its token
 * when it comes. `reservedAt`: the time of the caller's token.
 */
export function reserveAhead(
  state: RateBucketState,
  config: RateBucketConfig,
  now: number,
  at: number,
  withinMs: number,
): { state: RateBucketState; reservedAt?: number } {
  const filled = absorbBooked(refill(replayPastBookings(state, config, now), config, now), config, now);
  const nextAt = nextFreeAt(filled, config, now);
  if (nextAt >= at) {
    if (nextAt - at > withinMs) return { state: filled };
    return { state: { ...filled, tokens: filled.tokens - 1, lastTokenAt: nextAt }, reservedAt: nextAt };
  }
  if (config.burst > 1) return { state: filled };
  const booked = filled.booked ?? [];
  // The list is kept in the bucket's one item (DynamoDB): bounded, so each write of it stays small.
  if (booked.length >= maxBookedTokens) return { state: filled };
  const interval = 1000 / filled.rate;
  let time = at;
  for (const other of booked) {
    if (other + interval <= time + 1e-6) continue;
    if (time + interval <= other + 1e-6) break;
    time = Math.ceil(other + interval - 1e-6);
  }
  if (time - at > withinMs) return { state: filled };
  const sorted = [...booked, time].sort((a, b) => a - b);
  return { state: { ...filled, booked: sorted }, reservedAt: time };
}

/**
 * The most tokens booked ahead at once (`reserveAhead`): a full list, about 9 bytes a time in the
 * DynamoDB item, keeps the bucket's item within one write unit (1 KB); a call that finds it full
 * takes its token when it comes, as an unbooked call does.
 */
export const maxBookedTokens = 64;

/**
 * The bucket at `now` without taking anything (the limiters' `budget()`): its tokens after the
 * refill and after the booked tokens the line has reached (below zero while tokens are reserved
 * ahead), and its rate.
 */
export function bucketBudget(
  state: RateBucketState,
  config: RateBucketConfig,
  now: number,
): { tokens: number; ratePerSecond: number } {
  const filled = absorbBooked(refill(replayPastBookings(state, config, now), config, now), config, now);
  return { tokens: filled.tokens, ratePerSecond: filled.rate };
}

/**
 * When the line's next free token is due (`now` when there is one): a whole token refilled, and,
 * with a burst of 1, 1/rate after the last one. As `take` finds it.
 */
function nextFreeAt(filled: RateBucketState, config: RateBucketConfig, now: number): number {
  const spacedFrom =
    config.burst <= 1 && filled.lastTokenAt !== undefined
      ? filled.lastTokenAt + 1000 / filled.rate
      : Number.NEGATIVE_INFINITY;
  if (filled.tokens >= 1 - 1e-6 && now >= spacedFrom - 1e-6) return now;
  const refilledIn = filled.tokens >= 1 - 1e-6 ? 0 : ((1 - filled.tokens) / filled.rate) * 1000;
  return (
    filled.updatedAt +
    Math.max(1, Math.ceil(refilledIn - 1e-6), Math.ceil(spacedFrom - filled.updatedAt - 1e-6))
  );
}

/**
 * Booked tokens whose time has passed were spent at their time (the call they were booked for came
 * then). Each is taken from the bucket at its own time, after the refill up to it, so a run of them
 * left in the item by a bucket nobody wrote since costs what it cost then, not a debt of all of
 * them at once now (which put the next token seconds ahead, farther than a 2 s horizon, for as long
 * as nobody wrote the bucket: a take refused writes nothing, so the line never moved on).
 */
function replayPastBookings(state: RateBucketState, config: RateBucketConfig, now: number): RateBucketState {
  if (state.booked === undefined || state.booked.length === 0 || state.booked[0]! > now) return state;
  let replayed: RateBucketState = state;
  const future: number[] = [];
  for (const time of state.booked) {
    if (time > now) {
      future.push(time);
      continue;
    }
    // A booked time before the last update is taken at that update (no earlier refill to undo).
    replayed = refill(replayed, config, Math.max(time, replayed.updatedAt));
    replayed = {
      ...replayed,
      tokens: replayed.tokens - 1,
      lastTokenAt: Math.max(replayed.lastTokenAt ?? Number.NEGATIVE_INFINITY, time),
    };
  }
  return { ...replayed, booked: future.length > 0 ? future : undefined };
}

/**
 * The line reaches the first booked token (its next free token would be less than 1/rate before
 * it): take it from `tokens` now, and let the line go on 1/rate after it. Repeated for each booked
 * token so reached, so the next free token is always at least 1/rate before the first one left.
 */
function absorbBooked(filled: RateBucketState, config: RateBucketConfig, now: number): RateBucketState {
  let state = filled;
  while (state.booked !== undefined && state.booked.length > 0) {
    const [first, ...rest] = state.booked as [number, ...number[]];
    if (first + 1e-6 >= nextFreeAt(state, config, now) + 1000 / state.rate) break;
    state = {
      ...state,
      tokens: state.tokens - 1,
      lastTokenAt: Math.max(state.lastTokenAt ?? Number.NEGATIVE_INFINITY, first),
      booked: rest.length > 0 ? rest : undefined,
    };
  }
  return state;
}

/** Where successes climb back to quickly: just under the rate the upstream last throttled. */
const safeShare = 0.9;
/**
 * Above that, each success probes by this share of the known limit (about 500 successes to pass it),
 * or by up to a twentieth of the current rate (never more than a tenth of the configured step), so a
 * limit measured too low is outgrown within a few dozen successes without overshooting a good one.
 */
const probeShare = 1 / 500;

/**
 * The upstream throttled a call: empty the bucket, since the upstream has just told us it has no
 * room right now, and halve the rate (not below the floor). Several calls in flight together are
 * usually throttled together: within the cooldown after a decrease, the rate is left alone.
 */
export function throttled(state: RateBucketState, config: RateBucketConfig, now: number): RateBucketState {
  const filled = rollWindow(refill(state, config, now), now);
  const drained = {
    ...filled,
    tokens: Math.min(filled.tokens, 0),
    windowThrottled: (filled.windowThrottled ?? 0) + 1,
  };
  const last = filled.decreasedAt;
  if (last !== undefined && filled.updatedAt - last < config.decreaseCooldownMs) return drained;
  const limit = estimatedLimit(filled, config);
  return {
    ...drained,
    // With a measured limit go straight to just under it: a configured rate far above the key's
    // limit is corrected by a throttle or two instead of many halvings.
    rate: Math.max(
      config.floor,
      limit === undefined ? filled.rate * config.decreaseFactor : limit * safeShare,
    ),
    decreasedAt: filled.updatedAt,
    knownLimit: limit ?? filled.rate,
  };
}

/**
 * The key's limit, from the last complete one-second window: its successes, when throttled answers
 * in it show it was saturated; otherwise somewhere between its successes and the current rate, so
 * half the rate unless the successes say more. With no complete window yet, the successes of the
 * current one. Undefined when nothing was measured.
 */
function estimatedLimit(state: RateBucketState, config: RateBucketConfig): number | undefined {
  const ok = state.lastWindowOk ?? 0;
  if (ok <= 0) {
    // No complete second behind us (a run just began): the successes of this one, which the
    // throttle shows is already full, are the best guess; successes raise a low guess quickly.
    const current = state.windowOk ?? 0;
    return current > 0 ? current : undefined;
  }
  const saturated = (state.lastWindowThrottled ?? 0) > 0;
  // A saturated second's successes are the limit itself (even a little above the rate we ran at:
  // taking the lower of the two would ratchet the limit down with every stray throttle).
  return saturated ? ok : Math.min(state.rate, Math.max(ok, state.rate * config.decreaseFactor));
}

/** Start a new one-second window at `now` when the current one is over, keeping the last one's counts. */
function rollWindow(state: RateBucketState, now: number): RateBucketState {
  const start = state.windowStart;
  if (start !== undefined && now >= start && now - start < 1000) return state;
  const recent = start !== undefined && now >= start && now - start < 2000;
  return {
    ...state,
    windowStart: now,
    windowOk: 0,
    windowThrottled: 0,
    lastWindowOk: recent ? (state.windowOk ?? 0) : 0,
    lastWindowThrottled: recent ? (state.windowThrottled ?? 0) : 0,
  };
}

function countSuccess(state: RateBucketState, now: number): RateBucketState {
  const rolled = rollWindow(state, now);
  return { ...rolled, windowOk: (rolled.windowOk ?? 0) + 1 };
}

/**
 * A call went through. Below the known limit's safe share, climb a quarter of the way back at once
 * (a handful of successes recover from a halving); above it, or with no known limit, add the
 * configured step, but above a known limit only a tiny probe, so an upstream that raised its limit
 * is found again without hammering one that did not.
 */
export function succeeded(state: RateBucketState, config: RateBucketConfig, now: number): RateBucketState {
  const filled = countSuccess(refill(state, config, now), now);
  const known = filled.knownLimit;
  if (known === undefined) {
    return { ...filled, rate: Math.min(config.ceiling, filled.rate + config.increasePerSuccess) };
  }
  const target = Math.min(config.ceiling, known * safeShare);
  const rate =
    filled.rate < target
      ? Math.min(target, filled.rate + Math.max(config.increasePerSuccess / 10, (target - filled.rate) / 4))
      : filled.rate +
        Math.max(known * probeShare, Math.min(config.increasePerSuccess / 10, filled.rate / 20));
  return { ...filled, rate: Math.min(config.ceiling, rate) };
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * Whether a refused take shows the key's line longer than the call itself (what `saturated()`
 * remembers): its token more than one token interval away. A call refused only for the spacing
 * after the one before (a job's poll and its next step's call back to back on an idle key; on a
 * clock that stands still while steps run, any two calls) is not a saturated budget.
 */
export function lineIsLong(decision: RateDecision, rate: number, now: number): boolean {
  if (decision.granted) return false;
  return decision.retryAtMs - now > Math.ceil(1000 / Math.max(rate, 1e-9));
}

/** A stable, non-secret name for an API key: its rate bucket and its ledger name. */
export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

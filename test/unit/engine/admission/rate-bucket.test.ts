// The adaptive token bucket's arithmetic, with time injected: no test sleeps.
import { describe, expect, it } from 'vitest';
import {
  initialBucket,
  lineIsLong,
  type RateBucketConfig,
  type RateBucketState,
  rateBucketConfig,
  refill,
  succeeded,
  take,
  throttled,
} from '../../../../shared/engine/admission/rate-bucket';

const T0 = 1_700_000_000_000;

/** Takes tokens as fast as they are granted in [from, from + durationMs), jumping to each retry time. */
function grantsOver(state: RateBucketState, config: RateBucketConfig, from: number, durationMs: number) {
  let current = state;
  let now = from;
  let grants = 0;
  while (now < from + durationMs) {
    const result = take(current, config, now);
    current = result.state;
    if (result.decision.granted) grants += 1;
    else now = result.decision.retryAtMs;
  }
  return { grants, state: current };
}

describe('rateBucketConfig', () => {
  it('derives burst, floor and increase from the rate', () => {
    expect(rateBucketConfig({ ratePerSecond: 5 })).toEqual({
      ceiling: 5,
      floor: 0.25,
      burst: 1,
      increasePerSuccess: 0.1,
      decreaseFactor: 0.5,
      decreaseCooldownMs: 1000,
    });
    expect(rateBucketConfig({ ratePerSecond: 0.5 }).burst).toBe(1);
    expect(rateBucketConfig({ ratePerSecond: 2.5, burst: 3 }).burst).toBe(3);
  });

  it('by default lets no more than the rate through in any one second, even after a pause', () => {
    // The platform counts calls in a sliding one-second window.
    const config = rateBucketConfig({ ratePerSecond: 4 });
    const grantedAt: number[] = [];
    let state = initialBucket(config, T0);
    let now = T0 + 60_000;
    while (now < T0 + 65_000) {
      const result = take(state, config, now);
      state = result.state;
      if (result.decision.granted) grantedAt.push(now);
      else now = result.decision.retryAtMs;
    }
    const busiest = Math.max(
      ...grantedAt.map((at) => grantedAt.filter((t) => t > at - 1000 && t <= at).length),
    );
    expect(busiest).toBe(4);
    expect(grantedAt.length).toBe(20);
  });

  it('refuses nonsense with a message naming the option', () => {
    expect(() => rateBucketConfig({ ratePerSecond: 0 })).toThrow(/ratePerSecond/);
    expect(() => rateBucketConfig({ ratePerSecond: Number.NaN })).toThrow(/ratePerSecond/);
    expect(() => rateBucketConfig({ ratePerSecond: 5, burst: 0 })).toThrow(/burst/);
    expect(() => rateBucketConfig({ ratePerSecond: 5, floorPerSecond: -1 })).toThrow(/floorPerSecond/);
    expect(() => rateBucketConfig({ ratePerSecond: 5, increasePerSuccess: -1 })).toThrow(
      /increasePerSuccess/,
    );
  });

  it('never puts the floor above the ceiling', () => {
    expect(rateBucketConfig({ ratePerSecond: 2, floorPerSecond: 10 }).floor).toBe(2);
  });
});

describe('take', () => {
  const config = rateBucketConfig({ ratePerSecond: 4, burst: 2 });

  it('grants the burst at once, then refuses with the time of the next token', () => {
    let state = initialBucket(config, T0);
    for (let i = 0; i < 2; i += 1) {
      const result = take(state, config, T0);
      expect(result.decision).toEqual({ granted: true });
      state = result.state;
    }
    const refused = take(state, config, T0);
    expect(refused.decision).toEqual({ granted: false, retryAtMs: T0 + 250 });
    expect(take(refused.state, config, T0 + 249).decision.granted).toBe(false);
    expect(take(refused.state, config, T0 + 250).decision).toEqual({ granted: true });
  });

  it('counts fractional tokens towards the next one', () => {
    const state: RateBucketState = { tokens: 0.5, rate: 4, updatedAt: T0 };
    expect(take(state, config, T0).decision).toEqual({ granted: false, retryAtMs: T0 + 125 });
  });

  it('never holds more than the burst, however long it was idle', () => {
    const state = refill({ tokens: 0, rate: 4, updatedAt: T0 }, config, T0 + 3_600_000);
    expect(state.tokens).toBe(2);
  });

  it('grants the configured rate over time, plus the burst', () => {
    const { grants } = grantsOver(initialBucket(config, T0), config, T0, 10_000);
    expect(grants).toBe(2 + 39);
  });

  it('earns nothing when the clock goes backwards and does not move updatedAt back', () => {
    const state: RateBucketState = { tokens: 0, rate: 4, updatedAt: T0 };
    const result = take(state, config, T0 - 5_000);
    expect(result.decision).toEqual({ granted: false, retryAtMs: T0 + 250 });
    expect(result.state.updatedAt).toBe(T0);
  });
});

describe('throttled and succeeded', () => {
  const config = rateBucketConfig({ ratePerSecond: 4, burst: 4 });

  it('halves the rate and empties the bucket when throttled', () => {
    const state = throttled(initialBucket(config, T0), config, T0);
    expect(state.rate).toBe(2);
    expect(state.tokens).toBe(0);
    expect(state.decreasedAt).toBe(T0);
    expect(take(state, config, T0).decision).toEqual({ granted: false, retryAtMs: T0 + 500 });
  });

  it('halves once for throttles that arrive together, again after the cooldown', () => {
    let state = initialBucket(config, T0);
    for (let i = 0; i < 5; i += 1) state = throttled(state, config, T0 + i * 100);
    expect(state.rate).toBe(2);
    state = throttled(state, config, T0 + 1_000);
    expect(state.rate).toBe(1);
  });

  it('still halves on every throttle when the store does not keep decreasedAt', () => {
    let state: RateBucketState = initialBucket(config, T0);
    for (let i = 0; i < 2; i += 1) {
      const { decreasedAt: _dropped, ...kept } = throttled(state, config, T0);
      state = kept;
    }
    expect(state.rate).toBe(1);
  });

  it('never goes below the floor', () => {
    let state = initialBucket(config, T0);
    for (let i = 0; i < 20; i += 1) state = throttled(state, config, T0 + i * 2_000);
    expect(state.rate).toBe(config.floor);
  });

  it('climbs back quickly to just under the rate it was throttled at, then only probes slowly', () => {
    let state = throttled(initialBucket(config, T0), config, T0);
    expect(state).toMatchObject({ rate: 2, knownLimit: 4 });
    state = succeeded(state, config, T0 + 1);
    expect(state.rate).toBeCloseTo(2 + (3.6 - 2) / 4);
    for (let i = 0; i < 20; i += 1) state = succeeded(state, config, T0 + 2 + i);
    expect(state.rate).toBeCloseTo(3.6, 1);
    expect(state.rate).toBeLessThan(3.7);
    for (let i = 0; i < 100; i += 1) state = succeeded(state, config, T0 + 100 + i);
    expect(state.rate).toBeGreaterThan(3.6);
    expect(state.rate).toBeLessThan(3.6 + 101 * (4 / 500));
    for (let i = 0; i < 1000; i += 1) state = succeeded(state, config, T0 + 300 + i);
    expect(state.rate).toBe(4);
  });

  it('without a known limit (a store that keeps none) climbs one configured step per success', () => {
    const { knownLimit: _dropped, ...state } = throttled(initialBucket(config, T0), config, T0);
    expect(succeeded(state, config, T0 + 1).rate).toBeCloseTo(2 + 4 / 50);
  });

  it('finds a real limit far below a configured rate within seconds of throttles', () => {
    const fast = rateBucketConfig({ ratePerSecond: 1000 });
    let state = initialBucket(fast, T0);
    let now = T0;
    // The upstream allows 4 calls per second: every second spent above that brings one throttle.
    for (let second = 0; second < 12 && state.rate > 4; second += 1) {
      now += 1_000;
      state = throttled(state, fast, now);
    }
    expect(state.rate).toBeLessThanOrEqual(4);
    // Without further throttles it probes upwards again, by a tenth of the configured step per success.
    const found = state.rate;
    state = succeeded(state, fast, now + 1);
    expect(state.rate).toBeCloseTo(found + 1000 / 50 / 10);
  });

  it('grants fewer calls after throttling than before, over the same time', () => {
    const start = initialBucket(config, T0);
    const before = grantsOver(start, config, T0, 10_000).grants;
    const after = grantsOver(throttled(start, config, T0), config, T0, 10_000).grants;
    expect(after).toBeLessThan(before);
    expect(after).toBe(19);
  });

  it('keeps a rate stored out of range inside floor and ceiling', () => {
    const state = refill({ tokens: 0, rate: 50, updatedAt: T0 }, config, T0 + 1_000);
    expect(state.rate).toBe(4);
    expect(state.tokens).toBe(4);
  });
});

describe('throttled with a measured success rate', () => {
  it('goes straight to just under the successes of a saturated second', () => {
    const config = rateBucketConfig({ ratePerSecond: 1000 });
    let state = initialBucket(config, T0);
    // four calls get through, the fifth is throttled: this second's successes are the first guess
    for (let i = 0; i < 4; i += 1) state = succeeded(state, config, T0 + i * 200);
    state = throttled(state, config, T0 + 800);
    expect(state.knownLimit).toBe(4);
    expect(state.rate).toBeCloseTo(3.6);
    // a stray throttle a second later, after a saturated second of 4: the limit stays 4, no ratchet
    for (let i = 0; i < 4; i += 1) state = succeeded(state, config, T0 + 1_000 + i * 200);
    state = throttled(state, config, T0 + 2_100);
    expect(state.knownLimit).toBe(4);
    expect(state.rate).toBeCloseTo(3.6);
  });

  it('when the last second was not saturated, takes the limit to lie between its successes and the rate', () => {
    const config = rateBucketConfig({ ratePerSecond: 10 });
    let state = initialBucket(config, T0);
    for (let i = 0; i < 3; i += 1) state = succeeded(state, config, T0 + i * 300);
    state = throttled(state, config, T0 + 1_100);
    // the rate was 10 and only 3 calls were made: half the rate is the better guess
    expect(state.knownLimit).toBe(5);
    expect(state.rate).toBeCloseTo(4.5);
  });

  it('falls back to halving when no success was counted recently', () => {
    const config = rateBucketConfig({ ratePerSecond: 10 });
    let state = succeeded(initialBucket(config, T0), config, T0);
    state = throttled(state, config, T0 + 5_000);
    expect(state.rate).toBe(5);
    expect(state.knownLimit).toBe(10);
  });

  it('counts successes per one-second window', () => {
    const config = rateBucketConfig({ ratePerSecond: 10 });
    let state = initialBucket(config, T0);
    for (let i = 0; i < 3; i += 1) state = succeeded(state, config, T0 + i * 100);
    expect(state).toMatchObject({ windowStart: T0, windowOk: 3, windowThrottled: 0 });
    state = succeeded(state, config, T0 + 1_200);
    expect(state).toMatchObject({ windowStart: T0 + 1_200, windowOk: 1, lastWindowOk: 3 });
    state = succeeded(state, config, T0 + 5_000);
    expect(state).toMatchObject({ windowStart: T0 + 5_000, windowOk: 1, lastWindowOk: 0 });
  });
});

describe('reserving tokens', () => {
  it('never puts more than the rate in any sliding second, whatever the rounding of reserved times', () => {
    // Callers every 37 ms reserving up to 15 s ahead, at rates reached by climbing back after a
    // throttle (fractional, with floating-point noise): every call lands at its grant or reserved
    // time, and the upstream counts calls in (t - 1 s, t].
    for (const limit of [5, 4, 3, 7]) {
      const config = rateBucketConfig({ ratePerSecond: limit });
      let state = throttled(initialBucket(config, T0), config, T0);
      const times: number[] = [];
      for (let now = T0; now < T0 + 60_000; now += 37) {
        const result = take(state, config, now, 15_000);
        state = result.state;
        if (result.decision.granted) times.push(now);
        else if (result.decision.reserved) times.push(result.decision.retryAtMs);
        state = succeeded(state, config, now);
      }
      times.sort((a, b) => a - b);
      expect(times.length).toBeGreaterThan(limit * 40);
      for (const [i, at] of times.entries()) {
        expect(
          times.filter((other) => other > at - 1000 && other <= at).length,
          `call ${i} at ${at - T0}`,
        ).toBeLessThanOrEqual(limit);
      }
    }
  });

  it('lines callers up one token apart within the horizon, and refuses beyond it', () => {
    const config = rateBucketConfig({ ratePerSecond: 2 });
    let state = initialBucket(config, 0);
    const decisions = [];
    for (let i = 0; i < 5; i++) {
      const result = take(state, config, 0, 1_600);
      state = result.state;
      decisions.push(result.decision);
    }
    expect(decisions[0]).toEqual({ granted: true });
    expect(decisions.slice(1, 4)).toEqual([
      { granted: false, retryAtMs: 500, reserved: true },
      { granted: false, retryAtMs: 1_000, reserved: true },
      { granted: false, retryAtMs: 1_500, reserved: true },
    ]);
    // Beyond the horizon: not reserved, told when the first free token comes.
    expect(decisions[4]).toEqual({ granted: false, retryAtMs: 2_000 });
    // The reserved tokens are spent: nobody else gets one before 2 s.
    expect(take(state, config, 1_900).decision.granted).toBe(false);
    expect(take(state, config, 2_000).decision.granted).toBe(true);
  });
});

describe('lineIsLong (what saturated() remembers)', () => {
  it('is false for a grant and for a wait of one token interval, true beyond', () => {
    expect(lineIsLong({ granted: true }, 5, T0)).toBe(false);
    expect(lineIsLong({ granted: false, retryAtMs: T0 + 200 }, 5, T0)).toBe(false);
    expect(lineIsLong({ granted: false, retryAtMs: T0 + 201, reserved: true }, 5, T0)).toBe(true);
    // At 1,000 calls/s on a clock standing still: the next call 1 ms later is only the spacing.
    expect(lineIsLong({ granted: false, retryAtMs: T0 + 1, reserved: true }, 1_000, T0)).toBe(false);
    expect(lineIsLong({ granted: false, retryAtMs: T0 + 2, reserved: true }, 1_000, T0)).toBe(true);
  });
});
